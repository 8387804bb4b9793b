"""An asyncio saver's sync methods, called from another thread, do what its async ones do.

LangGraph's sync ``get_state`` / ``get_state_history`` on a graph compiled with
an asyncio saver call the saver's sync methods from a worker thread; those run
their async twins on the saver's loop. A sync listing that stops early closes
the async one and leaves nothing held: on a one-connection Postgres saver the
next call gets the connection at once. On both backends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import AsyncConnection

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver

STEPS = 30


@asynccontextmanager
async def _saver(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if backend == "postgres":
        url, schema = request.getfixturevalue("pg_schema")
        async with await AsyncConnection.connect(url, autocommit=True) as conn:
            saver = AsyncPostgresSaver(conn, schema=schema)  # one connection, under a lock
            await saver.setup()
            yield saver
    else:
        url, prefix = request.getfixturevalue("redis_prefix")
        async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
            await saver.setup()
            yield saver


def _config(parent: str | None) -> Any:
    conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
    if parent:
        conf["checkpoint_id"] = parent
    return {"configurable": conf}


def _write_history(saver: Any) -> list[str]:
    """``STEPS`` checkpoints of thread ``t`` through the sync ``put``; their ids, newest first."""
    parent = None
    ids = []
    for n in range(STEPS):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"n": n}
        checkpoint["channel_versions"] = {"n": f"{n + 1:06}"}
        stored = saver.put(_config(parent), checkpoint, {"step": n}, {"n": f"{n + 1:06}"})
        parent = stored["configurable"]["checkpoint_id"]
        ids.append(parent)
    return ids[::-1]


def _stop_early_then_read(saver: Any) -> tuple[list[str], Any]:
    """The first three ids of a sync listing stopped early, then a sync read."""
    listing = saver.list(_config(None))
    first = [next(listing).config["configurable"]["checkpoint_id"] for _ in range(3)]
    listing.close()
    return first, saver.get_tuple(_config(None))


@pytest.mark.parametrize("backend", ["postgres", "redis"])
async def test_sync_methods_from_a_worker_thread(
    backend: str, request: pytest.FixtureRequest
) -> None:
    async with _saver(backend, request) as saver:
        ids = await asyncio.to_thread(_write_history, saver)

        listed = await asyncio.to_thread(lambda: list(saver.list(_config(None))))
        assert [t.config["configurable"]["checkpoint_id"] for t in listed] == ids
        assert [t.checkpoint["id"] async for t in saver.alist(_config(None))] == ids

        first, latest = await asyncio.wait_for(
            asyncio.to_thread(_stop_early_then_read, saver), timeout=10
        )
        assert first == ids[:3]
        assert latest is not None and latest.checkpoint["id"] == ids[0]
        assert await asyncio.to_thread(saver.schema_version, _config(None)) == 0

        await asyncio.to_thread(saver.delete_thread, "t")
        assert await saver.aget_tuple(_config(None)) is None


@pytest.mark.parametrize("backend", ["postgres", "redis"])
async def test_sync_methods_on_the_loop_are_refused(
    backend: str, request: pytest.FixtureRequest
) -> None:
    async with _saver(backend, request) as saver:
        with pytest.raises(asyncio.InvalidStateError):
            saver.get_tuple(_config(None))
        with pytest.raises(asyncio.InvalidStateError):
            next(iter(saver.list(_config(None))))
