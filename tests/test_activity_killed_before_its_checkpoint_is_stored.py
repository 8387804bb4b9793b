"""A worker SIGKILLed while its step's checkpoint is still being stored: one key, one call.

Under LangGraph's default ``durability="async"``, the checkpoint a step runs
from is stored in the background while the step runs. Here that put is held
up in a real way (a table lock on PostgreSQL; ``CLIENT PAUSE WRITE`` on a
redis-server of the test's own) while the step calls an activity; the worker
is then SIGKILLed and the held-up put is lost with it (its backend ended, its
Redis client killed), as a crash loses a put still in flight. The restarted
worker re-makes the step from the checkpoint before, under a new id. The
activity must not have called its side effect before its checkpoint was
stored: the payment API sees one call, under the key of the step that stays.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests._slow_puts import (
    ASYNC_KINDS,
    SYNC_KINDS,
    PgCheckpointsLock,
    open_sync,
    own_redis_url_fixture,  # noqa: F401 - fixture
    storage,
)

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
HELD_S = 2.0  # how long the test watches for a side effect while the put is held up


def _worker(kind: str, url: str, area: str, folder: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests._slow_put_worker",
            kind,
            url,
            area,
            "pay-1",
            str(folder),
            mode,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_prep_checkpoint(kind: str, url: str, area: str) -> None:
    """Wait until the checkpoint ``prep`` runs from (step 0) is stored: its put is not held."""
    with open_sync(kind.replace("async", "sync"), url, area) as reader:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stored = reader.get_tuple({"configurable": {"thread_id": "pay-1"}})
            if stored is not None and stored.metadata.get("step", -1) >= 0:
                return
            time.sleep(0.02)
    raise AssertionError("the checkpoint prep runs from was not stored within 60 s")


def _wait_for_held_put(held: HeldPuts, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not held.held_up() and time.monotonic() < deadline:
        time.sleep(0.02)


def _wait_for(path: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return path.exists()


class HeldPuts:
    """Holds up the puts of one saver kind's storage; loses the held ones on :meth:`lose`."""

    def __init__(self, kind: str, url: str, area: str) -> None:
        self.redis_url = url if kind.startswith("redis") else None
        self.lock = None if self.redis_url else PgCheckpointsLock(url, area)

    def hold(self) -> None:
        if self.lock is not None:
            self.lock.take()
        else:
            client = redis.Redis.from_url(str(self.redis_url))
            client.execute_command("CLIENT", "PAUSE", 120_000, "WRITE")
            client.close()

    def held_up(self) -> bool:
        """Whether a put waits (observable on PostgreSQL; a pause holds every write)."""
        return self.lock is None or bool(self.lock.blocked_pids())

    def lose(self) -> None:
        """End what the dead worker left waiting, then let writes through again."""
        if self.lock is not None:
            self.lock.terminate_blocked()
            self.lock.release()
            return
        client = redis.Redis.from_url(str(self.redis_url))
        client.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        client.execute_command("CLIENT", "UNPAUSE")
        client.close()


@pytest.mark.parametrize("kind", [*SYNC_KINDS, *ASYNC_KINDS])
def test_side_effect_waits_for_the_checkpoint_and_the_retry_keeps_the_key(
    kind: str, request: pytest.FixtureRequest, own_redis_url: str, tmp_path: Path
) -> None:
    url, area = storage(kind, request, own_redis_url)
    calls = tmp_path / "calls"
    first = _worker(kind, url, area, tmp_path, "start")
    held = HeldPuts(kind, url, area)
    try:
        assert _wait_for(tmp_path / "in-prep", 60), first.communicate(timeout=5)
        _wait_for_prep_checkpoint(kind, url, area)
        held.hold()
        (tmp_path / "go").touch()
        # prep returns; the step after it runs while its checkpoint's put is held up
        _wait_for_held_put(held, 60)
        called_while_held = _wait_for(calls, HELD_S)
        assert held.held_up()
        assert first.poll() is None, first.communicate(timeout=5)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        held.lose()
    keys_of_first = calls.read_text().split() if calls.exists() else []

    second = _worker(kind, url, area, tmp_path, "resume")
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err[-3000:]
    assert "finished" in out

    keys = calls.read_text().split()
    assert len(keys) == len(set(keys)), keys  # at most once per key
    # the step made again after the kill used the key of any call made before it
    assert len(set(keys)) == 1, (keys_of_first, keys)
    # (because the side effect waited until its step's checkpoint was stored)
    assert not called_while_held, keys_of_first
