"""PostgreSQL: an error that is not about availability is never StorageUnavailableError.

A caller retrying on ``StorageUnavailableError`` must not retry forever on a
refusal such as an index row over btree's 2,704-byte limit (SQLSTATE 54000,
which psycopg files under ``OperationalError``). Thread ids, namespaces and
decision keys longer than 1,024 bytes of UTF-8 are refused before anything is sent,
with ``InvalidConfigError`` naming the field and the limit, and nothing of the
run is stored; a server limit is ``StorageRefusedError`` with its SQLSTATE.
Sync and async. (A read-only session's refusal and a killed connection, on both
backends: ``tests/test_refusals_are_not_reported_as_unavailability.py``.)
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from psycopg import sql

from langgraph_durable.checkpointers import (
    InvalidConfigError,
    StorageRefusedError,
    StorageUnavailableError,
)
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver

MODES = ["sync", "async"]


class State(TypedDict, total=False):
    n: int


def _graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("step", lambda s: {"n": s.get("n", 0) + 1})
    b.add_edge(START, "step")
    b.add_edge("step", END)
    return b.compile(checkpointer=saver)


class Shell:
    """One saver seen through the same calls, sync or async."""

    def __init__(self, saver: Any, mode: str) -> None:
        self.saver, self.mode = saver, mode

    async def put(self, config: dict[str, Any], values: dict[str, Any]) -> Any:
        cp = empty_checkpoint()
        cp["channel_values"] = values
        cp["channel_versions"] = {k: self.saver.get_next_version(None, None) for k in values}
        args = (config, cp, {}, cp["channel_versions"])
        if self.mode == "sync":
            return self.saver.put(*args)
        return await self.saver.aput(*args)

    async def invoke(self, thread_id: str) -> Any:
        config = {"configurable": {"thread_id": thread_id}}
        graph = _graph(self.saver)
        return graph.invoke({}, config) if self.mode == "sync" else await graph.ainvoke({}, config)

    async def record(self, thread_id: str, key: str) -> Any:
        decision = {"decision_id": "d1", "at": "2026-01-01T00:00:00+00:00", "by": "alice"}
        kw = {"thread_id": thread_id, "key": key, "decision": decision}
        if self.mode == "sync":
            return self.saver.decisions.record_decision(**kw)
        return await self.saver.decisions.arecord_decision(**kw)


@asynccontextmanager
async def shell(url: str, schema: str, mode: str, **kwargs: Any) -> AsyncIterator[Shell]:
    if mode == "sync":
        with PostgresSaver.from_conn_string(url, schema=schema, **kwargs) as saver:
            saver.setup()
            yield Shell(saver, mode)
    else:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema, **kwargs) as asaver:
            await asaver.setup()
            yield Shell(asaver, mode)


def _rows(url: str, schema: str, thread_id: str) -> dict[str, int]:
    out = {}
    with psycopg.connect(url) as conn:
        for table in ("checkpoints", "checkpoint_writes", "durable_run_leases", "durable_audit"):
            query = sql.SQL("SELECT count(*) FROM {} WHERE thread_id = %s").format(
                sql.Identifier(schema, table)
            )
            out[table] = conn.execute(query, (thread_id,)).fetchone()[0]
    return out


def _long(size: int) -> str:
    # random hex: the server cannot compress it into an index row
    return secrets.token_hex(size)[:size]


@pytest.mark.parametrize("mode", MODES)
async def test_a_run_on_a_thread_id_too_long_to_index_is_refused_by_name(
    pg_schema: tuple[str, str], mode: str
) -> None:
    url, schema = pg_schema
    async with shell(url, schema, mode) as s:
        for size in (1_025, 2_700, 10_000):
            thread_id = _long(size)
            with pytest.raises(InvalidConfigError) as refused:
                await s.invoke(thread_id)
            assert refused.value.field == "thread_id"
            assert "at most 1024" in refused.value.reason and f"{size} bytes" in str(refused.value)
            assert not isinstance(refused.value, StorageUnavailableError)
            assert set(_rows(url, schema, thread_id).values()) == {0}  # nothing stored
        # up to the limit, in bytes of UTF-8 (2-byte characters here), it is stored
        at_limit = "é" * 512
        assert (await s.invoke(at_limit)) == {"n": 1}
        with pytest.raises(InvalidConfigError):
            await s.invoke("é" * 512 + "x")


@pytest.mark.parametrize("mode", MODES)
async def test_a_namespace_or_decision_key_too_long_to_index_is_refused_by_name(
    pg_schema: tuple[str, str], mode: str
) -> None:
    url, schema = pg_schema
    async with shell(url, schema, mode) as s:
        config = {"configurable": {"thread_id": "t1", "checkpoint_ns": _long(2_700)}}
        with pytest.raises(InvalidConfigError) as refused:
            await s.put(config, {"v": 1})
        assert refused.value.field == "checkpoint_ns"
        with pytest.raises(InvalidConfigError) as refused:
            await s.record("t1", _long(3_000))
        assert refused.value.field == "key"


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_refusal_is_storage_refused_with_its_sqlstate(
    pg_schema: tuple[str, str], mode: str
) -> None:
    url, schema = pg_schema
    async with shell(url, schema, mode) as s:
        # a channel name too long for the blob table's index: program limit exceeded
        with pytest.raises(StorageRefusedError) as refused:
            await s.put({"configurable": {"thread_id": "t2"}}, {_long(3_000): [1, 2, 3]})
        assert refused.value.code == "54000" and refused.value.operation == "put"
        assert not isinstance(refused.value, StorageUnavailableError)
        assert "index row" in str(refused.value)
