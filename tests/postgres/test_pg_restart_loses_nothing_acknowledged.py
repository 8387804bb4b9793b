"""Crash-restart our own PostgreSQL while writers run: clear errors, recovery, no loss.

A server of the test's own (initdb + pg_ctl, never the shared one) is stopped
with ``-m immediate`` (a crash: recovery from WAL on restart) while a writer
stores checkpoints in a loop. Calls made while it is down fail with
:class:`StorageUnavailableError` (never a raw psycopg error, never a hang past
the pool timeout); the pool replaces its dead connections and the next calls
succeed; every checkpoint whose ``put`` returned is still there, and graphs
paused or finished before the crash resume or read back intact.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.interrupts import approve
from tests import _durability as d
from tests._own_postgres import OwnPostgres

pytestmark = pytest.mark.timeout(240)

POOL_TIMEOUT = 3.0


@pytest.fixture(scope="module")
def own_pg() -> Iterator[OwnPostgres]:
    server = OwnPostgres().init().start()
    try:
        yield server
    finally:
        server.remove()


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def checkpoint(step: int) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = {"step": step, "payload": b"x" * 2000}
    cp["channel_versions"] = {"step": step, "payload": step}
    return cp


class Outcome:
    def __init__(self) -> None:
        self.acked: list[str] = []
        self.errors: list[BaseException] = []
        self.acked_after_restart = 0


def crash_and_restart(server: OwnPostgres, outcome: Outcome) -> None:
    time.sleep(0.3)
    server.stop("immediate")
    # down for longer than the pool timeout: calls made now must fail, not wait
    time.sleep(POOL_TIMEOUT + 1)
    server.start()
    mark = len(outcome.acked)
    deadline = time.monotonic() + 60
    while len(outcome.acked) < mark + 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    outcome.acked_after_restart = len(outcome.acked) - mark


def check(outcome: Outcome, saver: Any, thread_id: str) -> None:
    assert outcome.errors, "the writer never saw the server down: the test missed its window"
    strange = [e for e in outcome.errors if not isinstance(e, StorageUnavailableError)]
    assert not strange, f"errors other than StorageUnavailableError: {strange[:3]!r}"
    assert all(e.backend == "postgres" for e in outcome.errors)  # type: ignore[attr-defined]
    assert outcome.acked_after_restart >= 20, "the pool did not recover"


def test_sync_saver_survives_a_server_crash(own_pg: OwnPostgres) -> None:
    schema = "sync_restart"
    with ConnectionPool(
        own_pg.url,
        min_size=1,
        max_size=4,
        kwargs={"autocommit": True},
        check=ConnectionPool.check_connection,
        timeout=POOL_TIMEOUT,
    ) as pool:
        saver = PostgresSaver(pool, schema=schema)
        saver.setup()
        graph = d.pipeline_graph(saver)
        d.drive_to_end(graph, saver, "finished")
        graph.invoke(d.PIPELINE_INPUT, cfg("paused"))
        before = d.final_values(graph, "finished")

        outcome = Outcome()
        stop = threading.Event()

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
                    # a clear error, and no hang beyond the pool's timeout
                    assert time.monotonic() - started < POOL_TIMEOUT + 5
                    outcome.errors.append(exc)
                time.sleep(0.005)

        t = threading.Thread(target=writer)
        t.start()
        try:
            crash_and_restart(own_pg, outcome)
        finally:
            stop.set()
            t.join(30)
        check(outcome, saver, "busy")
        for checkpoint_id in outcome.acked:
            assert saver.get_tuple(cfg("busy", checkpoint_id)) is not None, checkpoint_id
        assert d.final_values(graph, "finished") == before
        approve(graph, cfg("paused"), by="alice", roles=["ops"])
        assert d.final_values(graph, "paused") == before


async def test_async_saver_survives_a_server_crash(own_pg: OwnPostgres) -> None:
    schema = "async_restart"
    async with AsyncConnectionPool(
        own_pg.url,
        min_size=1,
        max_size=4,
        kwargs={"autocommit": True},
        check=AsyncConnectionPool.check_connection,
        timeout=POOL_TIMEOUT,
        open=False,
    ) as pool:
        saver = AsyncPostgresSaver(pool, schema=schema)
        await saver.setup()
        outcome = Outcome()
        stop = asyncio.Event()

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
                    assert time.monotonic() - started < POOL_TIMEOUT + 5
                    outcome.errors.append(exc)
                await asyncio.sleep(0.005)

        task = asyncio.create_task(writer())
        try:
            await asyncio.to_thread(crash_and_restart, own_pg, outcome)
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
        check(outcome, saver, "busy")
        stored = {t.config["configurable"]["checkpoint_id"] async for t in saver.alist(cfg("busy"))}
        missing = set(outcome.acked) - stored
        assert not missing, f"acknowledged checkpoints lost: {sorted(missing)[:5]}"
        latest = await saver.aget_tuple(cfg("busy"))
        assert latest is not None
