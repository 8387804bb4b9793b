"""Waiting, in a test, until a statement is seen blocked on another session's lock."""

from __future__ import annotations

import time

import psycopg


def wait_until_blocked_by(url: str, blocker_pid: int, what: str, timeout: float = 30) -> None:
    """Return once some session waits on a lock that session ``blocker_pid`` holds.

    Raises:
        AssertionError: naming ``what`` never got there within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as watch:
        while True:
            row = watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                (blocker_pid,),
            ).fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, f"{what} never reached the lock"
            time.sleep(0.02)
