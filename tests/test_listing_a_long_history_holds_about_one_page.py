"""Listing a whole history holds about one page in memory, whatever the thread's length.

Every checkpoint of a growing thread holds the whole list, so a listing that
builds the history before yielding holds the square of the thread's length
(400 checkpoints of a list growing by 2 kB: ~40 times what reading the newest
one takes). A caller that drops each tuple as the next one comes must hold
about what one read of the newest checkpoint holds: measured as the peak of
traced memory, against a cold ``get_tuple`` of the newest checkpoint on the
same saver. Postgres and Redis, sync and async.
"""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import POSTGRES, SAVER_KINDS
from tests._growing import put_items

ITEM = "x" * 2000
STEPS = 400


@asynccontextmanager
async def _open(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, Any]]:
    """``(sync saver, saver to read with)`` on storage of this test's own."""
    if backend.startswith(POSTGRES):
        url, schema = request.getfixturevalue("pg_schema")
        with PostgresSaver.from_conn_string(url, schema=schema) as writer:
            writer.setup()
            if backend == "postgres-sync":
                yield writer, writer
            else:
                async with AsyncPostgresSaver.from_conn_string(
                    url, schema=schema, pool_size=2
                ) as reader:
                    yield writer, reader
    else:
        url, prefix = request.getfixturevalue("redis_prefix")
        with RedisSaver.from_conn_string(url, prefix=prefix) as rwriter:
            rwriter.setup()
            if backend == "redis-sync":
                yield rwriter, rwriter
            else:
                async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as rreader:
                    yield rwriter, rreader


def _clear_chains(saver: Any) -> None:
    """Empty the saver's chain cache, so it reads as a fresh process would."""
    core = saver.core
    codec = getattr(core, "codec", None)  # Redis keeps its caches in the core's codec
    (codec.chains if codec is not None else core._chains).clear()


async def _each(saver: Any, config: Any, fn: Callable[[CheckpointTuple], None]) -> None:
    """Call ``fn`` on every tuple of ``list(config)``, holding none of them."""
    if isinstance(saver, (AsyncPostgresSaver, AsyncRedisSaver)):
        async for tup in saver.alist(config):
            fn(tup)
    else:
        await asyncio.to_thread(lambda: [fn(t) for t in saver.list(config)] and None)


async def _get(saver: Any, config: Any) -> Any:
    if isinstance(saver, (AsyncPostgresSaver, AsyncRedisSaver)):
        return await saver.aget_tuple(config)
    return await asyncio.to_thread(saver.get_tuple, config)


async def _peak(fn: Callable[[], Any]) -> int:
    """Peak traced memory while the coroutine function ``fn`` runs, in bytes."""
    tracemalloc.start()
    try:
        await fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("backend", SAVER_KINDS)
async def test_listing_a_long_growing_history_holds_about_one_page(
    request: pytest.FixtureRequest, backend: str
) -> None:
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with _open(backend, request) as (writer, saver):
        parent = None
        for n in range(1, STEPS + 1):
            parent = put_items(writer, parent, [f"{i:05}{ITEM}" for i in range(n)], f"{n:06}")
        await _get(saver, config)  # imports, prepared statements
        _clear_chains(saver)
        one = await _peak(lambda: _get(saver, config))
        _clear_chains(saver)
        seen: list[int] = []
        listing = await _peak(lambda: _each(saver, config, lambda t: seen.append(1)))
        assert len(seen) == STEPS

        def exact(tup: CheckpointTuple) -> None:
            items = tup.checkpoint["channel_values"]["items"]
            assert len(items) == tup.metadata["step"]
            assert items[-1] == f"{len(items) - 1:05}{ITEM}"

        await _each(saver, config, exact)
    assert listing < 4 * one, (listing, one)
