"""Between two pages of ``list()`` a Postgres saver holds no connection, cursor or transaction.

So a caller that stops early (break, close, an exception) leaves no
connection checked out, no cursor and no transaction open, other calls on a
one-connection saver run while a listing is under way, and a listing inside a
caller's transaction stays in it. Sync and async, on a pool and on one
connection. That the first tuple comes after one small page and that pages
keep to their budget, on both backends:
``tests/contract/test_history_is_read_page_by_page.py``; memory over a whole
history: ``tests/test_listing_a_long_history_holds_about_one_page.py``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint
from psycopg import AsyncConnection, AsyncCursor, Connection, Cursor
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.postgres._listing import PAGE_FIRST

FETCHED: list[int] = []  # rows each fetchall() returned, in order


class CountingCursor(Cursor[Any]):
    """A real cursor that records how many rows each fetch returns."""

    def fetchall(self) -> list[Any]:
        rows = super().fetchall()
        FETCHED.append(len(rows))
        return rows


class AsyncCountingCursor(AsyncCursor[Any]):
    """The async twin of :class:`CountingCursor`."""

    async def fetchall(self) -> list[Any]:
        rows = await super().fetchall()
        FETCHED.append(len(rows))
        return rows


MODES = ["sync-conn", "sync-pool", "async-conn", "async-pool"]


@asynccontextmanager
async def _saver(url: str, schema: str, mode: str) -> AsyncIterator[tuple[Any, Any]]:
    """``(saver, conn or pool)`` of ``mode``, counting fetched rows, set up on ``schema``."""
    if mode.startswith("sync"):
        kwargs = {"autocommit": True, "cursor_factory": CountingCursor}
        if mode == "sync-conn":
            with Connection.connect(url, **kwargs) as conn:
                saver = PostgresSaver(conn, schema=schema)
                saver.setup()
                yield saver, conn
        else:
            with ConnectionPool(url, min_size=2, max_size=2, kwargs=kwargs) as pool:
                pool.wait()
                saver = PostgresSaver(pool, schema=schema)
                saver.setup()
                yield saver, pool
    else:
        kwargs = {"autocommit": True, "cursor_factory": AsyncCountingCursor}
        if mode == "async-conn":
            async with await AsyncConnection.connect(url, **kwargs) as aconn:
                asaver = AsyncPostgresSaver(aconn, schema=schema)
                await asaver.setup()
                yield asaver, aconn
        else:
            async with AsyncConnectionPool(
                url, min_size=2, max_size=2, kwargs=kwargs, open=False
            ) as apool:
                await apool.wait()
                asaver = AsyncPostgresSaver(apool, schema=schema)
                await asaver.setup()
                yield asaver, apool


class _SyncSteps:
    """A sync saver's listing as an async iterator, each step taken in a worker thread."""

    _END = object()

    def __init__(self, gen: Iterator[CheckpointTuple]) -> None:
        self._gen = gen

    def __aiter__(self) -> _SyncSteps:
        return self

    async def __anext__(self) -> CheckpointTuple:
        item = await asyncio.to_thread(next, self._gen, self._END)
        if item is self._END:
            raise StopAsyncIteration
        return item  # type: ignore[return-value]

    async def aclose(self) -> None:
        await asyncio.to_thread(self._gen.close)


async def _take(
    saver: Any, config: Any, n: int | None = None, *, stop: str = "break", **kwargs: Any
) -> list[CheckpointTuple]:
    """The first ``n`` tuples of ``list(config)`` (all if None), then stop as ``stop`` says.

    ``stop``: ``break`` out of the loop, ``close`` the generator, or ``raise``
    in the loop body.
    """
    if isinstance(saver, AsyncPostgresSaver):
        steps: Any = saver.alist(config, **kwargs)
    else:
        steps = _SyncSteps(saver.list(config, **kwargs))
    out: list[CheckpointTuple] = []
    try:
        async for tup in steps:
            out.append(tup)
            if n is not None and len(out) >= n:
                if stop == "raise":
                    raise _Stop
                break
    except _Stop:
        pass
    if stop == "close":
        await steps.aclose()
    return out


class _Stop(Exception):
    pass


async def _call(saver: Any, method: str, *args: Any) -> Any:
    if isinstance(saver, AsyncPostgresSaver):
        return await getattr(saver, "a" + method)(*args)
    return await asyncio.to_thread(getattr(saver, method), *args)


def _seed_plain(url: str, schema: str, thread_id: str, steps: int) -> list[str]:
    """``steps`` checkpoints of one thread; their ids newest first."""
    ids = []
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for step in range(steps):
            cp = empty_checkpoint()
            config = saver.put(config, cp, {"step": step}, {})
            ids.append(cp["id"])
    return ids[::-1]


async def _nothing_open(saver: Any, where: Any) -> None:
    """No connection checked out, no cursor, no transaction left by the saver."""
    if isinstance(where, (ConnectionPool, AsyncConnectionPool)):
        stats = where.get_stats()
        assert stats.get("pool_available", 0) == stats["pool_size"], stats
        assert stats.get("requests_waiting", 0) == 0, stats
        return
    assert where.info.transaction_status == TransactionStatus.IDLE
    if isinstance(where, AsyncConnection):
        cur = await where.execute("SELECT count(*) FROM pg_cursors")
        assert await cur.fetchone() == (0,)
    else:
        assert where.execute("SELECT count(*) FROM pg_cursors").fetchone() == (0,)


@pytest.mark.parametrize("stop", ["break", "close", "raise"])
@pytest.mark.parametrize("mode", MODES)
async def test_stopping_early_leaves_nothing_open(
    pg_schema: tuple[str, str], mode: str, stop: str
) -> None:
    url, schema = pg_schema
    ids = _seed_plain(url, schema, "long", 60)
    config = {"configurable": {"thread_id": "long"}}
    async with _saver(url, schema, mode) as (saver, where):
        for n in (1, PAGE_FIRST + 5):  # in the first page, and in a later one
            FETCHED.clear()
            got = await _take(saver, config, n, stop=stop)
            assert [t.config["configurable"]["checkpoint_id"] for t in got] == ids[:n]
            # the first tuple came after one page of rows, on this connection or pool too
            assert ([PAGE_FIRST] if n == 1 else [PAGE_FIRST, 2 * PAGE_FIRST]) == FETCHED
            await _nothing_open(saver, where)
        # and the saver goes on working
        latest = await _call(saver, "get_tuple", config)
        assert latest.config["configurable"]["checkpoint_id"] == ids[0]


@pytest.mark.parametrize("mode", ["sync-conn", "async-conn"])
async def test_one_connection_serves_other_calls_while_a_listing_runs(
    pg_schema: tuple[str, str], mode: str
) -> None:
    url, schema = pg_schema
    ids = _seed_plain(url, schema, "long", 40)
    config = {"configurable": {"thread_id": "long"}}
    other = {"configurable": {"thread_id": f"other-{uuid.uuid4()}", "checkpoint_ns": ""}}
    async with _saver(url, schema, mode) as (saver, where):
        listed: list[str] = []

        if isinstance(saver, AsyncPostgresSaver):
            async for tup in saver.alist(config):
                listed.append(tup.config["configurable"]["checkpoint_id"])
                # the saver's one connection is free between two tuples
                got = await asyncio.wait_for(saver.aget_tuple(config), 30)
                assert got.config["configurable"]["checkpoint_id"] == ids[0]
                await asyncio.wait_for(saver.aput(other, empty_checkpoint(), {}, {}), 30)
        else:

            def run() -> None:
                for tup in saver.list(config):
                    listed.append(tup.config["configurable"]["checkpoint_id"])
                    got = saver.get_tuple(config)
                    assert got.config["configurable"]["checkpoint_id"] == ids[0]
                    saver.put(other, empty_checkpoint(), {}, {})

            await asyncio.wait_for(asyncio.to_thread(run), 60)
        assert listed == ids
        written = await _take(saver, other)
        assert len(written) == len(ids)
        await _nothing_open(saver, where)


@pytest.mark.parametrize("mode", ["sync-conn", "async-conn"])
async def test_a_listing_inside_a_callers_transaction_stays_in_it(
    pg_schema: tuple[str, str], mode: str
) -> None:
    url, schema = pg_schema
    ids = _seed_plain(url, schema, "long", 40)
    config = {"configurable": {"thread_id": "long", "checkpoint_ns": ""}}
    async with _saver(url, schema, mode) as (saver, conn):
        outside = await _take(saver, config)
        if isinstance(conn, AsyncConnection):
            async with conn.transaction():
                cp = empty_checkpoint()
                await saver.aput(config, cp, {"step": "mine"}, {})
                inside = await _take(saver, config)
                early = await _take(saver, config, PAGE_FIRST + 1)
                assert conn.info.transaction_status == TransactionStatus.INTRANS
        else:
            with conn.transaction():
                cp = empty_checkpoint()
                saver.put(config, cp, {"step": "mine"}, {})
                inside = await _take(saver, config)
                early = await _take(saver, config, PAGE_FIRST + 1)
                # still the caller's transaction: not committed, not rolled back
                assert conn.info.transaction_status == TransactionStatus.INTRANS
        # the caller's own uncommitted checkpoint is listed first, then the rest
        assert [t.config["configurable"]["checkpoint_id"] for t in inside] == [cp["id"], *ids]
        assert [t.checkpoint["id"] for t in early] == [cp["id"], *ids[:PAGE_FIRST]]
        assert [t.checkpoint["id"] for t in outside] == ids
        await _nothing_open(saver, conn)
        # committed when the caller's block ended
        with psycopg.connect(url) as check:
            (n,) = check.execute(
                f'SELECT count(*) FROM "{schema}".checkpoints WHERE thread_id = %s', ("long",)
            ).fetchone()
        assert n == len(ids) + 1


async def test_pages_on_a_connection_without_autocommit_end_their_transactions(
    pg_schema: tuple[str, str],
) -> None:
    url, schema = pg_schema
    ids = _seed_plain(url, schema, "long", 40)
    config = {"configurable": {"thread_id": "long"}}
    with Connection.connect(url) as conn:
        saver = PostgresSaver(conn, schema=schema)
        for n in (1, PAGE_FIRST + 1, None):
            got = await _take(saver, config, n)
            assert [t.checkpoint["id"] for t in got] == ids[:n]
            assert conn.info.transaction_status == TransactionStatus.IDLE
