"""On a Redis that requires a password, a missing or wrong one is one line and exit 1.

The server is the session's own redis-server with ``requirepass`` and an ACL
user; every command is tried without a password, with a wrong one, and with
a wrong ACL user, over TCP and the unix socket; then the right one works.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests._cli_support import COMMANDS, assert_one_error_line, run_cli
from tests._protected_servers import ACL_USER, REDIS_PASSWORD, ProtectedRedis, enc
from tests._servers import url_with


def _refused(rd: ProtectedRedis) -> dict[str, tuple[str, str]]:
    """Address -> (form, what the line must say)."""
    port, sock = rd.server.port, rd.socket
    missing = "requires a password and the address has none"
    wrong = "refused the user name or password"
    return {
        f"redis://127.0.0.1:{port}/0": ("no password", missing),
        f"unix://{sock}?db=1": ("no password, unix socket", missing),
        f"redis://:nope@127.0.0.1:{port}/0": ("wrong password", wrong),
        f"unix://{sock}?password=nope": ("wrong password, unix socket", wrong),
        f"redis://{ACL_USER}:{enc(REDIS_PASSWORD)}@127.0.0.1:{port}/0": ("wrong user", wrong),
        f"redis://nobody:nope@127.0.0.1:{port}/0": ("unknown user", wrong),
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_refused_login_is_one_line(
    command: str, capsys: pytest.CaptureFixture[str], protected_redis: ProtectedRedis
) -> None:
    for url, (form, says) in _refused(protected_redis).items():
        outcome = run_cli(capsys, *COMMANDS[command], "--url", url)
        line = assert_one_error_line(outcome)
        assert line.startswith("error: cannot log in to "), (form, line)
        assert says in line, (form, line)
        assert "Traceback" not in outcome.text


def test_the_script_prints_one_line_not_a_traceback(protected_redis: ProtectedRedis) -> None:
    url = f"redis://127.0.0.1:{protected_redis.server.port}/0"
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", "status", "--url", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()  # one line: before, a 69-line traceback
    assert line.startswith(
        f"error: cannot log in to {url}: the server requires a password and the address has none"
    ), line


def test_the_right_password_works(
    capsys: pytest.CaptureFixture[str], protected_redis: ProtectedRedis
) -> None:
    for form, url in protected_redis.forms().items():
        prefixed = url_with(url, "prefix", f"pw-{form}")
        assert run_cli(capsys, "setup", "--url", prefixed).code == 0, form
        outcome = run_cli(capsys, "status", "--url", prefixed)
        assert outcome.code == 0, (form, outcome)
        assert "runs: 0 running, 0 orphaned, 0 parked" in outcome.out
