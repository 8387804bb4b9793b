"""``from_conn_string`` opens a small pool by default, so one waiting call holds up no other.

Each graph step commits and waits for its WAL flush; on one connection the
calls of concurrent runs queue behind each other, on a pool they run side by
side (and the server flushes their commits together). Shown with a put that
waits for a table lock another session holds: on the default saver a read
of another thread answers meanwhile; with ``pool_size=None`` (one connection)
the read waits for the put. Sync and async.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import sql

from langgraph_durable.checkpointers.postgres import (
    DEFAULT_POOL_SIZE,
    AsyncPostgresSaver,
    PostgresSaver,
)

WAITING = """
SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT l.granted AND c.relname = 'checkpoints' AND n.nspname = %s
"""


def _config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def _lock(url: str, schema: str) -> psycopg.Connection[Any]:
    """A session holding EXCLUSIVE on the checkpoints table: puts wait, reads do not."""
    blocker = psycopg.connect(url)
    blocker.execute(
        sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.Identifier(schema, "checkpoints"))
    )
    return blocker


def _until_a_put_waits(url: str, schema: str) -> None:
    deadline = time.monotonic() + 20
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute(WAITING, (schema,)).fetchone()[0] == 0:  # type: ignore[index]
            assert time.monotonic() < deadline, "the put never reached the lock"
            time.sleep(0.02)


def test_the_default_is_a_small_pool() -> None:
    assert DEFAULT_POOL_SIZE == 4


@pytest.mark.parametrize("pool_size", [DEFAULT_POOL_SIZE, None], ids=["default", "one-connection"])
async def test_async_read_while_a_put_waits(pg_schema: tuple[str, str], pool_size: Any) -> None:
    url, schema = pg_schema
    options = {} if pool_size == DEFAULT_POOL_SIZE else {"pool_size": None}
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema, **options) as saver:
        await saver.setup()
        await saver.aput(_config("t0"), empty_checkpoint(), {}, {})
        blocker = _lock(url, schema)
        try:
            put = asyncio.create_task(saver.aput(_config("t1"), empty_checkpoint(), {}, {}))
            await asyncio.to_thread(_until_a_put_waits, url, schema)
            read = asyncio.create_task(saver.aget_tuple(_config("t0")))
            done, _ = await asyncio.wait({read}, timeout=3 if pool_size else 0.5)
            assert (read in done) is (pool_size is not None)
            assert not put.done()
        finally:
            blocker.rollback()
            blocker.close()
        await asyncio.wait_for(put, 20)
        assert (await asyncio.wait_for(read, 20)) is not None
        assert await saver.aget_tuple(_config("t1")) is not None


@pytest.mark.parametrize("pool_size", [DEFAULT_POOL_SIZE, None], ids=["default", "one-connection"])
def test_sync_read_while_a_put_waits(pg_schema: tuple[str, str], pool_size: Any) -> None:
    url, schema = pg_schema
    options = {} if pool_size == DEFAULT_POOL_SIZE else {"pool_size": None}
    with (
        PostgresSaver.from_conn_string(url, schema=schema, **options) as saver,
        ThreadPoolExecutor(2) as threads,
    ):
        saver.setup()
        saver.put(_config("t0"), empty_checkpoint(), {}, {})
        blocker = _lock(url, schema)
        try:
            put: Future[Any] = threads.submit(saver.put, _config("t1"), empty_checkpoint(), {}, {})
            _until_a_put_waits(url, schema)
            get: Callable[[], Any] = lambda: saver.get_tuple(_config("t0"))  # noqa: E731
            read = threads.submit(get)
            time.sleep(0.5)
            if pool_size is not None:
                assert read.result(timeout=3) is not None
            else:
                assert not read.done()
            assert not put.done()
        finally:
            blocker.rollback()
            blocker.close()
        put.result(timeout=20)
        assert read.result(timeout=20) is not None
        assert saver.get_tuple(_config("t1")) is not None
