"""A run paused at a static breakpoint gives its lease back, and recovery never resumes it.

``interrupt_before`` / ``interrupt_after`` (compiled in, passed per call, or a
subgraph's own) pause a run as ``interrupt()`` does, but write nothing that
says so. The run's lease is released as ``interrupted`` when the run returns
(not a heartbeat later), so however much later a recovery worker looks, it
finds no orphan and the thread waits for a human's go. A run whose process
died after such a pause, before its lease was released, leaves an expired
lease: a recovery worker sees the graph's breakpoint in the thread's state and
releases the lease instead of resuming past it, while an orphan stopped
anywhere else is still resumed (and stops at the next breakpoint). Postgres
and Redis, sync and async.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.interrupts import RecoveryWorker
from tests._backends import BACKENDS, POSTGRES
from tests._lease_support import settings, where_of
from tests._parts import method_of

MODES = ["sync", "async"]
SLOW_HEARTBEAT = settings(30, 10)  # no heartbeat runs during a test: releases are the run's own
DEAD = "gone-host:1:run:dead"
CFG: dict[str, Any] = {"configurable": {"thread_id": "t"}}


class Trace(TypedDict):
    trace: Annotated[list[str], operator.add]


def _node(name: str) -> Any:
    return lambda state: {"trace": [name]}


def _chain(saver: Any, **breakpoints: Any) -> Any:
    """``a -> b -> c``: each node appends its name."""
    g: StateGraph[Any] = StateGraph(Trace)
    for name in "abc":
        g.add_node(name, _node(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver, **breakpoints)


def _with_subgraph(saver: Any) -> Any:
    """``outer`` runs a subgraph compiled with its own ``interrupt_before``."""
    inner: StateGraph[Any] = StateGraph(Trace)
    inner.add_node("inner", _node("inner"))
    inner.add_edge(START, "inner")
    inner.add_edge("inner", END)
    g: StateGraph[Any] = StateGraph(Trace)
    g.add_node("outer", inner.compile(interrupt_before=["inner"]))
    g.add_edge(START, "outer")
    g.add_edge("outer", END)
    return g.compile(checkpointer=saver)


# how each breakpoint is set: (graph, per-call options, the trace at the pause, next)
PAUSES = {
    "compiled before": (lambda s: _chain(s, interrupt_before=["b"]), {}, ["a"], ("b",)),
    "compiled after": (lambda s: _chain(s, interrupt_after=["a"]), {}, ["a"], ("b",)),
    "per call before": (_chain, {"interrupt_before": ["b"]}, ["a"], ("b",)),
    "per call after": (_chain, {"interrupt_after": ["a"]}, ["a"], ("b",)),
    "a subgraph's": (_with_subgraph, {}, [], ("outer",)),
}


class Side:
    """A saver and its calls, sync or async alike."""

    def __init__(self, saver: Any, mode: str) -> None:
        self.saver, self.mode = saver, mode

    async def call(self, name: str, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return method_of(self.saver, name)(**kwargs)
        return await method_of(self.saver, "a" + name)(**kwargs)

    async def invoke(self, graph: Any, value: Any, **options: Any) -> Any:
        if self.mode == "sync":
            return graph.invoke(value, CFG, **options)
        return await graph.ainvoke(value, CFG, **options)

    async def state(self, graph: Any) -> Any:
        return graph.get_state(CFG) if self.mode == "sync" else await graph.aget_state(CFG)

    async def recover(self, graph: Any, clock: Any = None) -> Any:
        worker = RecoveryWorker(graph, clock=clock)
        return worker.run_once() if self.mode == "sync" else await worker.arun_once()


@asynccontextmanager
async def _side(backend: str, mode: str, where: dict[str, str]) -> AsyncIterator[Side]:
    if mode == "sync":
        if backend == POSTGRES:
            cm: Any = PostgresSaver.from_conn_string(
                where["url"], schema=where["schema"], leases=SLOW_HEARTBEAT
            )
        else:
            cm = RedisSaver.from_conn_string(
                where["url"], prefix=where["prefix"], leases=SLOW_HEARTBEAT
            )
        with cm as saver:
            saver.setup()
            yield Side(saver, mode)
            saver.run_leases.close()
        return
    if backend == POSTGRES:
        acm: Any = AsyncPostgresSaver.from_conn_string(
            where["url"], schema=where["schema"], leases=SLOW_HEARTBEAT
        )
    else:
        acm = AsyncRedisSaver.from_conn_string(
            where["url"], prefix=where["prefix"], leases=SLOW_HEARTBEAT
        )
    async with acm as asaver:
        await asaver.setup()
        yield Side(asaver, mode)
        asaver.arun_leases.close()


async def _pause(side: Side, pause: str) -> Any:
    make, options, trace, following = PAUSES[pause]
    graph = make(side.saver)
    await side.invoke(graph, {"trace": []}, **options)
    state = await side.state(graph)
    assert state.values["trace"] == trace and state.next == following
    return graph


async def _left_by_a_dead_run(side: Side) -> None:
    """What a run killed after its pause, before its release, leaves: an expired lease."""
    now = datetime.now(timezone.utc)
    record = await side.call(
        "acquire_lease",
        thread_id="t",
        owner=DEAD,
        now=now - timedelta(hours=1),
        ttl=timedelta(seconds=1),
    )
    assert record is not None and record.is_orphaned(now)


@pytest.mark.parametrize("pause", list(PAUSES))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_pause_releases_the_lease_and_recovery_leaves_the_thread_waiting(
    backend: str, mode: str, pause: str, request: pytest.FixtureRequest
) -> None:
    async with _side(backend, mode, where_of(backend, request)) as side:
        graph = await _pause(side, pause)
        record = await side.call("get_lease", thread_id="t")
        assert (record.state, record.reason) == ("released", "interrupted")
        later = datetime.now(timezone.utc) + timedelta(hours=1)
        report = await side.recover(graph, clock=lambda: later)
        assert (report.found, report.recovered) == (0, [])
        state = await side.state(graph)
        assert state.values["trace"] == PAUSES[pause][2] and state.next == PAUSES[pause][3]


@pytest.mark.parametrize("pause", ["compiled before", "compiled after"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_recovery_releases_a_dead_runs_lease_at_the_graphs_breakpoint(
    backend: str, mode: str, pause: str, request: pytest.FixtureRequest
) -> None:
    async with _side(backend, mode, where_of(backend, request)) as side:
        graph = await _pause(side, pause)
        await _left_by_a_dead_run(side)
        report = await side.recover(graph)
        assert (report.found, report.recovered, report.closed) == (1, [], ["t"])
        record = await side.call("get_lease", thread_id="t")
        assert (record.state, record.reason) == ("released", "interrupted")
        state = await side.state(graph)
        assert state.values["trace"] == ["a"] and state.next == ("b",)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_orphan_elsewhere_is_resumed_up_to_the_next_breakpoint(
    backend: str, mode: str, request: pytest.FixtureRequest
) -> None:
    async with _side(backend, mode, where_of(backend, request)) as side:
        graph = _chain(side.saver, interrupt_before=["c"])
        # stopped before b (a per-call breakpoint the graph does not have): to
        # the recovery worker's graph, a run that died after a
        await side.invoke(graph, {"trace": []}, interrupt_before=["b"])
        await _left_by_a_dead_run(side)
        report = await side.recover(graph)
        assert report.recovered == ["t"]
        state = await side.state(graph)
        assert state.values["trace"] == ["a", "b"] and state.next == ("c",)
        record = await side.call("get_lease", thread_id="t")
        assert (record.state, record.reason) == ("released", "interrupted")
