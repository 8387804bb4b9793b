"""put, put_writes, get_tuple and list(limit=10) are one statement each (one round trip).

The core yields every statement a call runs and the shells execute each one
with a single ``execute`` (extended protocol: one round trip), so counting the
statements the core yields counts the round trips. The async shell is
also checked live, with a cursor class that records what it sends.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import AsyncConnection, AsyncCursor

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver


def _count(op: Any, rows: Any = None) -> int:
    n = 0
    try:
        next(op)
        while True:
            n += 1
            op.send(rows)
    except StopIteration:
        return n


def _checkpoint(saver: Any) -> tuple[dict, dict]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": ["x" * 1000] * 5, "n": 3}
    cp["channel_versions"] = {k: saver.get_next_version(None, None) for k in cp["channel_values"]}
    return cp, cp["channel_versions"]


def test_core_yields_one_statement_per_hot_call(pg_schema) -> None:
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True) as conn:
        saver = PostgresSaver(conn, schema=schema)
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        cp, versions = _checkpoint(saver)
        assert _count(saver.core.put(cfg, cp, {"step": 1}, versions)) == 1
        cfg["configurable"]["checkpoint_id"] = cp["id"]
        writes = [("messages", ["y"]), ("__interrupt__", ["z"])]
        assert _count(saver.core.put_writes(cfg, writes, "task", "")) == 1
        assert _count(saver.core._op_get_tuple({"configurable": {"thread_id": "t"}}), []) == 1


SENT: list[str] = []


class CountingCursor(AsyncCursor[Any]):
    """A real cursor that records every statement it sends."""

    async def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        SENT.append(str(query))
        return await super().execute(query, *args, **kwargs)


async def test_live_calls_send_one_query_each(pg_schema) -> None:
    url, schema = pg_schema
    async with await AsyncConnection.connect(
        url, autocommit=True, cursor_factory=CountingCursor
    ) as conn:
        saver = AsyncPostgresSaver(conn, schema=schema)
        await saver.setup()
        SENT.clear()
        sent = SENT
        tid = f"t-{uuid.uuid4()}"
        cfg = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
        cp, versions = _checkpoint(saver)
        stored = await saver.aput(cfg, cp, {"step": 1}, versions)
        assert len(sent) == 1
        await saver.aput_writes(stored, [("messages", ["y"])], "task")
        assert len(sent) == 2
        tup = await saver.aget_tuple({"configurable": {"thread_id": tid}})
        assert len(sent) == 3
        assert tup.pending_writes == [("task", "messages", ["y"])]


async def test_a_limited_listing_is_one_statement(pg_schema) -> None:
    url, schema = pg_schema
    async with await AsyncConnection.connect(
        url, autocommit=True, cursor_factory=CountingCursor
    ) as conn:
        saver = AsyncPostgresSaver(conn, schema=schema)
        await saver.setup()
        tid = f"t-{uuid.uuid4()}"
        cfg = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
        ids = []
        for step in range(25):
            cp, versions = _checkpoint(saver)
            cfg = await saver.aput(cfg, cp, {"step": step}, versions)
            ids.append(cp["id"])
        thread = {"configurable": {"thread_id": tid}}
        SENT.clear()
        listed = [t async for t in saver.alist(thread, limit=10)]
        assert [t.checkpoint["id"] for t in listed] == ids[::-1][:10]
        assert len(SENT) == 1
        SENT.clear()
        got = [t async for t in saver.alist(thread, filter={"step": 3}, limit=10)]
        assert [t.checkpoint["id"] for t in got] == [ids[3]]
        assert len(SENT) == 1
        SENT.clear()
        got = [t async for t in saver.alist(thread, limit=20)]
        assert [t.checkpoint["id"] for t in got] == ids[::-1][:20]
        assert len(SENT) == 1


async def test_async_saver_sync_methods_work_from_another_thread(pg_schema) -> None:
    url, schema = pg_schema
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
        await saver.setup()
        cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4()}", "checkpoint_ns": ""}}
        cp, versions = _checkpoint(saver)
        stored = await asyncio.to_thread(saver.put, cfg, cp, {"step": 1}, versions)
        tup = await asyncio.to_thread(saver.get_tuple, stored)
        assert tup.checkpoint["channel_values"]["n"] == 3
        listed = await asyncio.to_thread(lambda: list(saver.list(cfg)))
        assert len(listed) == 1
        with pytest.raises(asyncio.InvalidStateError):
            saver.get_tuple(stored)  # from the event loop's own thread: would deadlock
