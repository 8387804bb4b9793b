"""A feature whose optional extra is not installed says which extra to install.

The packages are hidden from the import system for the test (``None`` in
``sys.modules``, as an environment without them raises ``ModuleNotFoundError``):
``serve`` and ``worker --serve`` without the ``service`` extra, the demo and
:func:`start_embedded_postgres` without the ``embedded`` extra. The command line
says it in one line before it starts anything; from Python the error is
:class:`MissingExtra`, which also names ``LANGGRAPH_DURABLE_URL``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from langgraph_durable.interrupts import InterruptsError, MissingExtra, start_embedded_postgres
from tests._cli_support import GRAPH_ARGS, assert_one_error_line, run_cli
from tests._serve_process import tokens_file

SERVICE = "error: the approval service needs the service extra (uvicorn is missing): "
SERVICE += "pip install 'langgraph-durable[service]'"


@pytest.mark.parametrize("command", [["serve"], ["worker", "--once", "--serve"]])
def test_serving_without_the_service_extra(
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    tokens = str(tokens_file(tmp_path))
    # nothing listens at this address: the extra is checked before storage is opened
    url = "redis://127.0.0.1:1/0"
    outcome = run_cli(capsys, *command, *GRAPH_ARGS, "--tokens", tokens, "--url", url)
    assert assert_one_error_line(outcome) == SERVICE
    assert outcome.out == ""


def test_the_demo_without_the_embedded_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pgserver", None)
    monkeypatch.delenv("LANGGRAPH_DURABLE_URL", raising=False)
    outcome = run_cli(capsys, "demo")
    line = assert_one_error_line(outcome)
    assert line == (
        "error: the embedded database needs the `embedded` extra: "
        'pip install "langgraph-durable[embedded]" (or pass --url)'
    )
    assert "starting" not in outcome.out


def test_start_embedded_postgres_without_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "pgserver", None)
    with pytest.raises(MissingExtra) as caught:
        start_embedded_postgres(tmp_path / "pgdata")
    err = caught.value
    assert isinstance(err, InterruptsError) and isinstance(err, ImportError)
    assert (err.extra, err.missing, err.name) == ("embedded", "pgserver", "pgserver")
    assert str(err) == (
        "the embedded PostgreSQL needs the embedded extra (pgserver is missing): "
        "pip install 'langgraph-durable[embedded]', or set LANGGRAPH_DURABLE_URL to the URL "
        "of a PostgreSQL or Redis server"
    )
    assert "--url" not in str(err)
    assert not (tmp_path / "pgdata").exists()
