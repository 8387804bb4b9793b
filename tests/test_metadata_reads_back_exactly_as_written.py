"""Checkpoint metadata reads back exactly as written; the schema version is read apart.

LangGraph compares a checkpoint's metadata with what it wrote (its own test
suite does). Our savers store the schema version of every checkpoint beside
the metadata (a column, a record field) and give it through
``saver.schema_version(config)``: ``get_tuple``, ``list``, ``get_state`` and
``get_state_history`` return the metadata as LangGraph or the caller wrote it,
on both backends, sync and async, including after an upgrade on read and after
``upgrade_all``. A ``schema_version`` key of the caller's own is kept and
filtered on like any other key.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.migrations import StateMigrations, aupgrade_all, upgrade_all
from tests._backends import POSTGRES, SAVER_KINDS

KINDS = SAVER_KINDS
CFG: Any = {"configurable": {"thread_id": "t-1"}}


class State(TypedDict):
    n: int
    log: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    def one(state: State) -> dict[str, Any]:
        return {"n": state["n"] + 1, "log": ["one"]}

    def ask(state: State) -> dict[str, Any]:
        answer = interrupt({"question": "go on?"})
        return {"log": [f"ask:{answer}"]}

    builder = StateGraph(State)
    builder.add_node("one", one)
    builder.add_node("ask", ask)
    builder.add_edge(START, "one")
    builder.add_edge("one", "ask")
    return builder.compile(checkpointer=saver)


def _migrations(version: int) -> StateMigrations:
    m = StateMigrations(version=version)
    for v in range(1, version):

        @m.upgrade(from_version=v)
        def bump(values: dict[str, Any]) -> dict[str, Any]:
            values["n"] = values.get("n", 0) + 100
            return values

    return m


class Area:
    """One test's storage area, and savers of one kind opened on it."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.is_async = kind.endswith("async")
        if kind.startswith(POSTGRES):
            self.url, self.name = request.getfixturevalue("pg_schema")
        else:
            self.url, self.name = request.getfixturevalue("redis_prefix")

    @asynccontextmanager
    async def open(self, version: int) -> AsyncIterator[Any]:
        m = _migrations(version)
        if self.kind == "postgres-sync":
            with PostgresSaver.from_conn_string(self.url, schema=self.name, migrations=m) as s:
                s.setup()
                yield s
        elif self.kind == "postgres-async":
            async with AsyncPostgresSaver.from_conn_string(
                self.url, schema=self.name, migrations=m
            ) as s:
                await s.setup()
                yield s
        elif self.kind == "redis-sync":
            with RedisSaver.from_conn_string(self.url, prefix=self.name, migrations=m) as s:
                s.setup()
                yield s
        else:
            async with AsyncRedisSaver.from_conn_string(
                self.url, prefix=self.name, migrations=m
            ) as s:
                await s.setup()
                yield s

    async def call(self, saver: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        """``saver.method(...)``, or its ``a``-twin awaited on an async saver."""
        if not self.is_async:
            out = getattr(saver, method)(*args, **kwargs)
            return list(out) if method == "list" else out
        if method == "list":
            return [t async for t in saver.alist(*args, **kwargs)]
        return await getattr(saver, "a" + method)(*args, **kwargs)

    async def run(self, graph: Any, value: Any) -> Any:
        if self.is_async:
            return await graph.ainvoke(value, CFG)
        return graph.invoke(value, CFG)

    async def states(self, graph: Any) -> tuple[Any, list[Any]]:
        if self.is_async:
            return await graph.aget_state(CFG), [s async for s in graph.aget_state_history(CFG)]
        return graph.get_state(CFG), list(graph.get_state_history(CFG))


@pytest.fixture(params=KINDS)
def area(request: pytest.FixtureRequest) -> Area:
    return Area(request.param, request)


def _reference_metadata() -> tuple[Any, list[Any]]:
    """What LangGraph's own in-memory saver gives back for the same run."""
    graph = _graph(InMemorySaver())
    graph.invoke({"n": 1, "log": []}, CFG)
    graph.invoke(Command(resume="yes"), CFG)
    return graph.get_state(CFG).metadata, [s.metadata for s in graph.get_state_history(CFG)]


async def test_graph_metadata_reads_back_as_langgraph_wrote_it(area: Area) -> None:
    expected_state, expected_history = _reference_metadata()
    async with area.open(3) as saver:
        graph = _graph(saver)
        await area.run(graph, {"n": 1, "log": []})
        await area.run(graph, Command(resume="yes"))
        state, history = await area.states(graph)
        assert state.metadata == expected_state
        assert [s.metadata for s in history] == expected_history
        tuples = await area.call(saver, "list", CFG)
        assert [t.metadata for t in tuples] == expected_history
        latest = await area.call(saver, "get_tuple", CFG)
        assert latest.metadata == expected_state
        # the schema version is stored with every checkpoint, read apart
        versions = [await area.call(saver, "schema_version", t.config) for t in tuples]
        assert versions == [3] * len(tuples)
        assert await area.call(saver, "schema_version", CFG) == 3
        missing = {"configurable": {"thread_id": "no-such-thread"}}
        assert await area.call(saver, "schema_version", missing) is None


async def test_a_schema_version_key_of_the_callers_reads_back_and_filters(area: Area) -> None:
    config = {"configurable": {"thread_id": "t-own", "checkpoint_ns": ""}}
    metadata = {"source": "input", "step": -1, "parents": {}, "schema_version": "user-v9"}
    async with area.open(2) as saver:
        stored = await area.call(saver, "put", config, empty_checkpoint(), metadata, {})
        tup = await area.call(saver, "get_tuple", stored)
        assert tup.metadata == metadata
        assert await area.call(saver, "schema_version", stored) == 2
        own = await area.call(saver, "list", None, filter={"schema_version": "user-v9"})
        assert [t.config for t in own] == [stored]
        # a filter matches the metadata as read: the saver's version is not in it
        assert await area.call(saver, "list", None, filter={"schema_version": 2}) == []
        plain = {"configurable": {"thread_id": "t-plain", "checkpoint_ns": ""}}
        other = await area.call(saver, "put", plain, empty_checkpoint(), {"step": 1}, {})
        assert (await area.call(saver, "get_tuple", other)).metadata == {"step": 1}
        assert await area.call(saver, "list", None, filter={"schema_version": 2}) == []


async def test_upgrades_leave_the_metadata_as_written(area: Area) -> None:
    async with area.open(1) as saver:
        graph = _graph(saver)
        await area.run(graph, {"n": 1, "log": []})
        written, history = await area.states(graph)
        written_md = [s.metadata for s in history]
    async with area.open(2) as saver:
        graph = _graph(saver)
        state, upgraded_history = await area.states(graph)
        assert state.values["n"] == 102  # upgraded on read
        assert state.metadata == written.metadata
        assert [s.metadata for s in upgraded_history] == written_md
        assert await area.call(saver, "schema_version", CFG) == 1  # still stored at 1
        if area.is_async:
            await aupgrade_all(saver, _migrations(2), all_history=True)
        else:
            upgrade_all(saver, _migrations(2), all_history=True)
        tuples = await area.call(saver, "list", CFG)
        assert [t.metadata for t in tuples] == written_md
        assert [await area.call(saver, "schema_version", t.config) for t in tuples] == [2] * len(
            tuples
        )
        await area.run(graph, Command(resume="ok"))
        latest = await area.call(saver, "get_tuple", CFG)
        assert "schema_version" not in latest.metadata
        assert await area.call(saver, "schema_version", CFG) == 2
