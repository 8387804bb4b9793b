"""User mistakes on the command line are one clear line and a non-zero exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from langgraph_durable.interrupts._cli_common import redact_url


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_help_lists_the_commands() -> None:
    out = _cli("--help")
    assert out.returncode == 0
    assert "setup" in out.stdout


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://root@localhost/db", "unsupported URL"),
    ],
)
def test_bad_or_unreachable_url_is_one_line(url: str, expected: str) -> None:
    out = _cli("setup", "--url", url)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert expected in lines[0]
    assert "Traceback" not in out.stderr
    assert "secret" not in out.stderr


def test_passwords_are_redacted() -> None:
    assert redact_url("postgresql://u:pw@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert redact_url("redis://h:6379/0") == "redis://h:6379/0"
