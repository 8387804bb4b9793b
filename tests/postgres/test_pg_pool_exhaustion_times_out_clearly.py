"""An exhausted connection pool fails the call with PoolTimeoutError, it never hangs.

Every connection of the pool is held elsewhere; a saver call then waits the
pool's timeout and raises :class:`langgraph_durable.checkpointers.PoolTimeoutError` (a
``StorageUnavailableError`` and a ``TimeoutError``), and works again as soon
as a connection is free.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers import PoolTimeoutError, StorageUnavailableError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver

TIMEOUT = 0.5
CFG = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}

pytestmark = pytest.mark.timeout(60)


async def test_async_saver_times_out_on_an_exhausted_pool(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    async with AsyncConnectionPool(
        url, min_size=2, max_size=2, kwargs={"autocommit": True}, timeout=TIMEOUT, open=False
    ) as pool:
        saver = AsyncPostgresSaver(pool, schema=schema)
        await saver.setup()
        async with pool.connection(), pool.connection():
            started = time.monotonic()
            with pytest.raises(PoolTimeoutError) as info:
                await asyncio.wait_for(saver.aget_tuple(CFG), TIMEOUT + 10)
            waited = time.monotonic() - started
            calls = [saver.aget_tuple(CFG) for _ in range(20)]
            results = await asyncio.gather(*calls, return_exceptions=True)
        assert TIMEOUT * 0.8 <= waited < TIMEOUT + 5
        assert isinstance(info.value, StorageUnavailableError)
        assert isinstance(info.value, TimeoutError)
        assert info.value.operation == "get_tuple"
        assert "no pooled connection became free" in str(info.value)
        assert all(isinstance(r, PoolTimeoutError) for r in results), results
        assert await saver.aget_tuple(CFG) is None  # free again: works


def test_sync_saver_times_out_on_an_exhausted_pool(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with ConnectionPool(
        url, min_size=1, max_size=1, kwargs={"autocommit": True}, timeout=TIMEOUT
    ) as pool:
        saver = PostgresSaver(pool, schema=schema)
        saver.setup()
        with pool.connection():
            started = time.monotonic()
            with pytest.raises(PoolTimeoutError):
                saver.get_tuple(CFG)
            assert TIMEOUT * 0.8 <= time.monotonic() - started < TIMEOUT + 5
        assert saver.get_tuple(CFG) is None
