"""SIGKILL our own redis-server (AOF, fsync always) while a writer stores checkpoints.

Calls made while it is down fail with ``StorageUnavailableError`` (after the
saver's own retries), never a raw redis-py error or a hang; the client
reconnects and the next calls succeed; every checkpoint whose ``put``
returned is still there after the restart.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests.redis._own_server import OwnRedis

pytestmark = pytest.mark.timeout(180)


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def checkpoint(step: int) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = {"step": step, "payload": [b"x" * 2000]}
    cp["channel_versions"] = {"step": step, "payload": step}
    return cp


class Outcome:
    def __init__(self) -> None:
        self.acked: list[str] = []
        self.errors: list[BaseException] = []
        self.acked_after_restart = 0


def crash_and_restart(server: OwnRedis, outcome: Outcome) -> None:
    time.sleep(0.3)
    assert server.proc is not None
    server.proc.kill()  # a crash: no shutdown save, only what the AOF holds
    server.proc.wait()
    server.proc = None
    time.sleep(1.5)  # long enough for the saver's retries to give up
    server.start()
    mark = len(outcome.acked)
    deadline = time.monotonic() + 60
    while len(outcome.acked) < mark + 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    outcome.acked_after_restart = len(outcome.acked) - mark


def check(outcome: Outcome) -> None:
    assert outcome.errors, "the writer never saw the server down: the test missed its window"
    strange = [e for e in outcome.errors if not isinstance(e, StorageUnavailableError)]
    assert not strange, f"errors other than StorageUnavailableError: {strange[:3]!r}"
    assert all(e.backend == "redis" for e in outcome.errors)  # type: ignore[attr-defined]
    assert outcome.acked_after_restart >= 20, "the client did not reconnect"


def test_sync_saver_keeps_every_acknowledged_put(own_redis: OwnRedis) -> None:
    with RedisSaver.from_conn_string(own_redis.url, prefix="crash") as saver:
        saver.setup()
        outcome, stop = Outcome(), threading.Event()

        def writer() -> None:
            step, parent = 0, None
            while not stop.is_set():
                step += 1
                started = time.monotonic()
                try:
                    out = saver.put(
                        cfg("busy", parent),
                        checkpoint(step),
                        {"step": step},
                        {"step": step, "payload": step},
                    )
                    parent = out["configurable"]["checkpoint_id"]
                    outcome.acked.append(parent)
                except Exception as exc:
                    assert time.monotonic() - started < 15, "a call hung"
                    outcome.errors.append(exc)
                time.sleep(0.005)

        t = threading.Thread(target=writer)
        t.start()
        try:
            crash_and_restart(own_redis, outcome)
        finally:
            stop.set()
            t.join(30)
        check(outcome)
        for checkpoint_id in outcome.acked:
            assert saver.get_tuple(cfg("busy", checkpoint_id)) is not None, checkpoint_id


async def test_async_saver_keeps_every_acknowledged_put(own_redis: OwnRedis) -> None:
    async with AsyncRedisSaver.from_conn_string(own_redis.url, prefix="crash") as saver:
        await saver.setup()
        outcome, stop = Outcome(), asyncio.Event()

        async def writer() -> None:
            step, parent = 0, None
            while not stop.is_set():
                step += 1
                started = time.monotonic()
                try:
                    out = await saver.aput(
                        cfg("busy", parent),
                        checkpoint(step),
                        {"step": step},
                        {"step": step, "payload": step},
                    )
                    parent = out["configurable"]["checkpoint_id"]
                    outcome.acked.append(parent)
                except Exception as exc:
                    assert time.monotonic() - started < 15, "a call hung"
                    outcome.errors.append(exc)
                await asyncio.sleep(0.005)

        task = asyncio.create_task(writer())
        try:
            await asyncio.to_thread(crash_and_restart, own_redis, outcome)
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
        check(outcome)
        stored = {t.config["configurable"]["checkpoint_id"] async for t in saver.alist(cfg("busy"))}
        missing = set(outcome.acked) - stored
        assert not missing, f"acknowledged checkpoints lost: {sorted(missing)[:5]}"
