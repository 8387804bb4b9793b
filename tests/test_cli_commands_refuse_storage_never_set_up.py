"""Every command that reads or writes stored threads refuses storage nobody set up.

A schema or key prefix that ``setup`` never ran on (a typo, most often) is one
line naming it and exit code 1 on both backends, never an empty inbox or an
unknown thread; after ``setup`` the same commands work. ``setup`` itself, and
``demo`` (which makes an area of its own), are the commands that create storage.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests._backends import BACKENDS
from tests._cli_support import COMMANDS, GRAPH_ARGS, assert_one_error_line, run_cli
from tests._serve_process import tokens_file
from tests._servers import url_with

READING = {name: args for name, args in COMMANDS.items() if name not in ("setup", "demo")}
READING.update(
    {
        "inbox": ["inbox"],
        "audit-verify": ["audit", "t-1", "--verify"],
        "respond": ["respond", "t-1", "--text", "ok", "--as", "alice"],
        "extend": ["extend", "t-1", "--by", "1h", "--as", "alice"],
        "reassign": ["reassign", "t-1", "--to", "finance", "--as", "alice"],
        "remind": ["remind", "t-1", "--as", "alice"],
        "cancel": ["cancel", "t-1", "--as", "alice"],
        "notifications": ["notifications"],
        "worker-retention": ["worker", *GRAPH_ARGS, "--once", "--retention", "30d"],
        "retention": ["retention", "--older-than", "30d"],
    }
)
"""Every command that opens existing storage, with the arguments it needs besides --url."""

POSTGRES_ONLY = {"retention", "worker-retention"}


def _fresh(backend: str, request: pytest.FixtureRequest) -> tuple[str, str, str]:
    """``(CLI url, namespace parameter, name)`` of a schema or prefix nobody set up."""
    if backend == "postgres":
        url, schema = request.getfixturevalue("pg_schema")  # exists, holds nothing
        return url_with(url, "schema", schema), "schema", schema
    url, prefix = request.getfixturevalue("redis_prefix")
    return url_with(url, "prefix", prefix), "prefix", prefix


def _assert_not_set_up(line: str, param: str, name: str) -> None:
    assert line.startswith("error: nothing is set up at "), line
    assert f"({param} {name!r})" in line, line
    assert line.endswith("run `langgraph-durable setup` with this --url first"), line


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_command_names_the_namespace_nobody_set_up(
    backend: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    url, param, name = _fresh(backend, request)
    wrong = {}
    for command, args in READING.items():
        if backend == "redis" and command in POSTGRES_ONLY:
            continue
        outcome = run_cli(capsys, *args, "--url", url)
        lines = outcome.err.strip().splitlines()
        if (
            outcome.code != 1
            or len(lines) != 1
            or not lines[0].startswith("error: nothing is set up at ")
            or f"({param} {name!r})" not in lines[0]
        ):
            wrong[command] = (outcome.code, outcome.out[-200:], outcome.err[-300:])
    assert not wrong, wrong
    # once set up, the same address is storage that holds nothing yet
    assert run_cli(capsys, "setup", "--url", url).code == 0
    empty = run_cli(capsys, "inbox", "--url", url)
    assert empty.code == 0, empty
    unknown = assert_one_error_line(run_cli(capsys, "inspect", "t-1", "--url", url))
    assert "nothing is set up" not in unknown and "t-1" in unknown


def test_a_mistyped_redis_prefix_is_not_an_empty_inbox(
    redis_prefix: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    url, prefix = redis_prefix
    assert run_cli(capsys, "setup", "--url", url_with(url, "prefix", prefix)).code == 0
    typo = url_with(url, "prefix", prefix + "x")
    _assert_not_set_up(
        assert_one_error_line(run_cli(capsys, "inbox", "--url", typo)), "prefix", prefix + "x"
    )


def test_the_default_schema_is_named_when_the_url_gives_none(
    pg_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a database of its own, never set up: its public schema holds no layout
    line = assert_one_error_line(run_cli(capsys, "inbox", "--url", pg_database))
    _assert_not_set_up(line, "schema", "public")


def test_serve_refuses_before_it_listens(pg_schema: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg_schema
    # a process of its own: a server that did start would be stopped by the timeout
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "langgraph_durable.interrupts.cli",
            "serve",
            *GRAPH_ARGS,
            "--tokens",
            str(tokens_file(tmp_path)),
            "--port",
            "1",  # never bound: the check comes first
            "--url",
            url_with(url, "schema", schema),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, done.stderr
    _assert_not_set_up(lines[0], "schema", schema)
