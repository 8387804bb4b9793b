"""Run the command line's real entry point in this process, as a shell would.

``run()`` is what the ``langgraph-durable`` script calls: it turns every
failure into one line and an exit code. Running it here (not in a subprocess)
keeps the many-command tests fast; each call starts with no remembered
passwords, so a password masked in its output was masked by that command.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from dataclasses import dataclass

import pytest

from langgraph_durable.interrupts._cli_errors import forget_secrets
from langgraph_durable.interrupts.cli import run
from langgraph_durable.migrations import StateMigrations

MIGRATIONS = StateMigrations(version=1)
GRAPH = "langgraph_durable.interrupts._demo:build_graph"
GRAPH_ARGS = ("--graph", GRAPH)

COMMANDS: dict[str, list[str]] = {
    "setup": ["setup"],
    "status": ["status"],
    "inspect": ["inspect", "t-1"],
    "audit": ["audit", "t-1"],
    "approve": ["approve", "t-1", "--by", "alice"],
    "reject": ["reject", "t-1", "--by", "alice", *GRAPH_ARGS],
    "unpark": ["unpark", "t-1"],
    "sweep": ["sweep", *GRAPH_ARGS, "--once"],
    "sweep-async": ["sweep", *GRAPH_ARGS, "--once", "--async"],
    "worker": ["worker", *GRAPH_ARGS, "--once"],
    "migrate": ["migrate", "--migrations", f"{__name__}:MIGRATIONS"],
    "demo": ["demo"],
}
"""Every command, with the arguments it needs besides --url."""


@dataclass(frozen=True)
class Outcome:
    """Exit code and what the command printed."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> Outcome:
    """``langgraph-durable ARGS`` through ``run()``; its exit code, stdout and stderr."""
    forget_secrets()
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["langgraph-durable", *args]
    code = 0
    try:
        run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def assert_one_error_line(outcome: Outcome) -> str:
    """The command failed with exit code 1 and one line on stderr, no traceback: that line."""
    lines = outcome.err.strip().splitlines()
    assert outcome.code == 1, outcome
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def run_cli_here(*args: str) -> subprocess.CompletedProcess[str]:
    """``langgraph-durable ARGS`` through ``run()`` in this process, shaped like ``subprocess.run``.

    For tests that call the command many times: importing LangGraph in a new
    interpreter costs more than most commands.
    """
    forget_secrets()
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["langgraph-durable", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
