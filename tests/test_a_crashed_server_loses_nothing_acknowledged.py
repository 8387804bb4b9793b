"""A server that crashes under load loses nothing a saver acknowledged; the saver recovers.

A server of the test's own (never the shared one) is crashed while a writer
stores checkpoints in a loop: PostgreSQL stopped with ``-m immediate``
(recovery from WAL on restart), redis-server killed with SIGKILL (AOF with
``fsync always``: only what the AOF holds survives). Calls made while it is
down fail with :class:`StorageUnavailableError` naming the backend and the
operation, never a raw driver error and never a hang past the pool timeout or
the saver's retries; the same saver reconnects and the next calls succeed;
every checkpoint whose ``put`` returned is still there, and graphs finished or
paused before the crash read back intact and go on. Both backends, sync and
async.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.interrupts import approve
from tests import _durability as d
from tests._backends import POSTGRES, SAVER_KINDS
from tests._own_postgres import OwnPostgres
from tests.contract import SyncAsAsync
from tests.redis._own_server import OwnRedis

pytestmark = pytest.mark.timeout(240)

POOL_TIMEOUT = 3.0
"""How long a Postgres call waits for a connection; calls while the server is down fail by then."""

ACKS_AROUND_THE_CRASH = 20
"""Puts acknowledged before the crash, and again after the restart, for the test to count."""


@dataclass
class Crashable:
    """A server of the test's own that the test crashes and starts again."""

    backend: str
    url: str
    crash: Callable[[], None]
    start: Callable[[], None]
    down_for: float
    """Seconds it stays down: longer than a call may wait (pool timeout, the saver's retries)."""
    hang_bound: float
    """Seconds any one call may take, failing or not."""


@pytest.fixture(scope="module")
def own_pg() -> Iterator[OwnPostgres]:
    server = OwnPostgres().init().start()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis(args=["--appendonly", "yes", "--appendfsync", "always", "--save", ""])
    server.start()
    yield server
    server.remove()


def _kill(server: OwnRedis) -> None:
    assert server.proc is not None
    server.proc.kill()  # a crash: no shutdown save, only what the AOF holds
    server.proc.wait()
    server.proc = None


def _started(server: OwnPostgres | OwnRedis) -> None:
    server.start()


def _crashable(kind: str, request: pytest.FixtureRequest) -> Crashable:
    if kind.startswith(POSTGRES):
        pg: OwnPostgres = request.getfixturevalue("own_pg")
        return Crashable(
            "postgres",
            pg.url,
            crash=lambda: pg.stop("immediate"),
            start=lambda: _started(pg),
            down_for=POOL_TIMEOUT + 1,
            hang_bound=POOL_TIMEOUT + 5,
        )
    own: OwnRedis = request.getfixturevalue("own_redis")
    return Crashable(
        "redis",
        own.url,
        crash=lambda: _kill(own),
        start=lambda: _started(own),
        down_for=1.5,
        hang_bound=15,
    )


@asynccontextmanager
async def _open(kind: str, url: str) -> AsyncIterator[Any]:
    """An async-facing saver of ``kind`` (sync savers wrapped), on an area of its own."""
    area = f"crash_{uuid.uuid4().hex[:8]}"
    pool_options: dict[str, Any] = {
        "min_size": 1,
        "max_size": 4,
        "kwargs": {"autocommit": True},
        "timeout": POOL_TIMEOUT,
    }
    if kind == "postgres-sync":
        check = ConnectionPool.check_connection
        with ConnectionPool(url, check=check, **pool_options) as pool:
            saver = PostgresSaver(pool, schema=area)
            saver.setup()
            yield SyncAsAsync(saver)
    elif kind == "postgres-async":
        acheck = AsyncConnectionPool.check_connection
        async with AsyncConnectionPool(url, check=acheck, open=False, **pool_options) as apool:
            asaver = AsyncPostgresSaver(apool, schema=area)
            await asaver.setup()
            yield asaver
    elif kind == "redis-sync":
        with RedisSaver.from_conn_string(url, prefix=area) as rsaver:
            rsaver.setup()
            yield SyncAsAsync(rsaver)
    else:
        async with AsyncRedisSaver.from_conn_string(url, prefix=area) as arsaver:
            await arsaver.setup()
            yield arsaver


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


class Writer:
    """Stores checkpoints of thread ``busy`` in a loop until stopped; records what happened."""

    def __init__(self, saver: Any, hang_bound: float) -> None:
        self.saver, self.hang_bound = saver, hang_bound
        self.acked: list[str] = []
        self.errors: list[BaseException] = []
        self.slow_calls: list[float] = []
        self.stop = asyncio.Event()
        self._target = 0
        self._reached = asyncio.Event()

    async def run(self) -> None:
        step, parent = 0, None
        while not self.stop.is_set():
            step += 1
            started = time.monotonic()
            try:
                cp = checkpoint(step)
                out = await self.saver.aput(
                    cfg("busy", parent), cp, {"step": step}, cp["channel_versions"]
                )
                parent = out["configurable"]["checkpoint_id"]
                self.acked.append(parent)
                if len(self.acked) >= self._target:
                    self._reached.set()
            except Exception as exc:
                self.errors.append(exc)
            took = time.monotonic() - started
            if took > self.hang_bound:  # a clear error, and no hang
                self.slow_calls.append(took)
            await asyncio.sleep(0.005)

    async def acked_more(self, than: int) -> int:
        """How many more puts than ``than`` were acknowledged, waiting (up to 60 s) for enough."""
        self._target = than + ACKS_AROUND_THE_CRASH
        self._reached.clear()
        if len(self.acked) < self._target:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._reached.wait(), 60)
        return len(self.acked) - than


class State(TypedDict):
    n: int


def _counter_graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("inc", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "inc")
    b.add_edge("inc", END)
    return b.compile(checkpointer=saver)


async def _graphs_before(saver: Any) -> Callable[[], Any]:
    """Runs graphs to their end or to a pause; returns the check to make after the restart."""
    if isinstance(saver, SyncAsAsync):
        inner = saver.inner
        counter, pipeline = _counter_graph(inner), d.pipeline_graph(inner)

        def before() -> dict[str, Any]:
            assert counter.invoke({"n": 1}, cfg("counter"))["n"] == 2
            d.drive_to_end(pipeline, inner, "finished")
            pipeline.invoke(d.PIPELINE_INPUT, cfg("paused"))
            return d.final_values(pipeline, "finished")

        finished = await asyncio.to_thread(before)

        def after() -> None:
            assert counter.get_state(cfg("counter")).values == {"n": 2}
            assert counter.invoke({"n": 10}, cfg("counter"))["n"] == 11
            assert len(list(inner.list(cfg("counter")))) == 6  # two runs, three checkpoints each
            assert d.final_values(pipeline, "finished") == finished
            approve(pipeline, cfg("paused"), by="alice", roles=["ops"])
            assert d.final_values(pipeline, "paused") == finished

        return lambda: asyncio.to_thread(after)

    graph = _counter_graph(saver)
    assert (await graph.ainvoke({"n": 1}, cfg("counter")))["n"] == 2

    async def aafter() -> None:
        assert (await graph.aget_state(cfg("counter"))).values == {"n": 2}
        assert (await graph.ainvoke({"n": 5}, cfg("counter")))["n"] == 6

    return aafter


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_a_crash_under_load_loses_nothing_acknowledged(
    kind: str, request: pytest.FixtureRequest
) -> None:
    server = _crashable(kind, request)
    async with _open(kind, server.url) as saver:
        check_graphs = await _graphs_before(saver)
        writer = Writer(saver, server.hang_bound)
        task = asyncio.create_task(writer.run())
        try:
            assert await writer.acked_more(0) >= ACKS_AROUND_THE_CRASH, "no puts before the crash"
            await asyncio.to_thread(server.crash)
            # down for longer than a call may wait: calls made now must fail, not wait
            await asyncio.sleep(server.down_for)
            with pytest.raises(StorageUnavailableError) as down:
                await saver.aget_tuple(cfg("busy"))
            assert down.value.operation == "get_tuple" and down.value.backend == server.backend
            await asyncio.to_thread(server.start)
            acked_after_restart = await writer.acked_more(len(writer.acked))
        finally:
            writer.stop.set()
            await asyncio.wait_for(task, 30)

        assert writer.errors, "the writer never saw the server down: the test missed its window"
        strange = [e for e in writer.errors if not isinstance(e, StorageUnavailableError)]
        assert not strange, f"errors other than StorageUnavailableError: {strange[:3]!r}"
        assert all(e.backend == server.backend for e in writer.errors)  # type: ignore[attr-defined]
        assert all(e.operation == "put" for e in writer.errors)  # type: ignore[attr-defined]
        assert not writer.slow_calls, f"calls hung: {writer.slow_calls}"
        assert acked_after_restart >= ACKS_AROUND_THE_CRASH, "the saver did not reconnect"

        stored = {t.config["configurable"]["checkpoint_id"] async for t in saver.alist(cfg("busy"))}
        missing = set(writer.acked) - stored
        assert not missing, f"acknowledged checkpoints lost: {sorted(missing)[:5]}"
        for checkpoint_id in writer.acked:
            assert await saver.aget_tuple(cfg("busy", checkpoint_id)) is not None, checkpoint_id
        assert await saver.aget_tuple(cfg("busy")) is not None
        await check_graphs()
