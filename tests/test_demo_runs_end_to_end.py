"""`langgraph-durable demo` tells its story across separate processes and loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", "demo", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


def _pids(stdout: str) -> set[str]:
    return {line.split("pid ")[1].split("]")[0] for line in stdout.splitlines() if "pid " in line}


def test_demo_on_the_embedded_database() -> None:
    # not pytest's tmp_path: another pytest session resets its root to 0700, and the
    # embedded server runs as its own user, which must traverse the folders
    tmp_path = Path(tempfile.mkdtemp(prefix="lgd-demo-"))
    env = {k: v for k, v in os.environ.items() if k != "LANGGRAPH_DURABLE_URL"}
    env["XDG_CACHE_HOME"] = str(tmp_path)  # the embedded server's data goes here
    out = _demo(env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "starting an embedded PostgreSQL" in out.stdout
    assert (tmp_path / "langgraph-durable" / "pgdata").is_dir()
    assert "paused at ['review']" in out.stdout
    assert "refund of $120.00 issued (approved by alice)" in out.stdout
    assert "facts gathered before the pause: 5/5 intact=True" in out.stdout
    assert "nothing was lost." in out.stdout
    assert len(_pids(out.stdout)) == 3  # agent, operator and worker ran in three processes
    assert "the worker resumed 1 run(s)" in out.stdout


def test_timeout_demo_applies_the_default(pg_database: str) -> None:
    out = _demo("--timeout-demo", "--url", pg_database)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the sweeper resolved 1 approval(s)" in out.stdout
    assert "by=system" in out.stdout and "timed_out=True" in out.stdout
    assert "nothing was lost." in out.stdout


def test_demo_on_redis(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    out = _demo("--url", f"{url}{'&' if '?' in url else '?'}prefix={prefix}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "refund of $120.00 issued (approved by alice)" in out.stdout
    assert "nothing was lost." in out.stdout
