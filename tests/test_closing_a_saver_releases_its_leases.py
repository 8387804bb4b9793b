"""Closing a saver releases the run leases it holds and stops their heartbeat first.

A run that failed (its exception still referenced, as a test's ``raises``
block or an error report keeps it) or was cancelled is over, but the saver
only learns it when its Runtime object is freed: its heartbeat released the
lease up to an interval later. Nothing stopped that heartbeat when
``from_conn_string()`` exited, so it then logged ``ERROR lease heartbeat
failed ... connection is closed`` and the lease row stayed ``running`` until
it expired (and a recovery worker took a thread nobody had to recover). Now
leaving ``from_conn_string()`` (or ``close()`` / ``aclose()`` on a saver built
on one's own connection) stops the heartbeat and releases those leases: no
ERROR afterwards and no ``running`` row, on both backends, sync and async.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph

from langgraph_durable.checkpointers import LeaseSettings
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import POSTGRES, SAVER_KINDS, area_fixture
from tests._parts import part_of

KINDS = SAVER_KINDS
FAST = LeaseSettings(lease=timedelta(seconds=2), heartbeat=timedelta(milliseconds=300))
HEARTBEAT = FAST.heartbeat.total_seconds()


class State(TypedDict, total=False):
    n: int


def _graph(saver: Any, node: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("work", node)
    builder.add_edge(START, "work")
    return builder.compile(checkpointer=saver)


def _fail(state: State) -> State:
    raise RuntimeError("the node failed")


def _hanging(started: asyncio.Event) -> Any:
    async def hang(state: State) -> State:
        started.set()
        await asyncio.sleep(60)
        return {"n": 1}

    return hang


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


class Area:
    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        fixture = area_fixture(kind)
        self.url, self.name = request.getfixturevalue(fixture)
        self.option = {"schema": self.name} if kind.startswith(POSTGRES) else {"prefix": self.name}

    def sync_cls(self) -> Any:
        return PostgresSaver if self.kind.startswith(POSTGRES) else RedisSaver

    def async_cls(self) -> Any:
        return AsyncPostgresSaver if self.kind.startswith(POSTGRES) else AsyncRedisSaver

    def lease_state(self, thread: str) -> str | None:
        with self.sync_cls().from_conn_string(self.url, **self.option, leases=False) as saver:
            saver.setup()
            record = part_of(saver, "leases").get_lease(thread_id=thread)
        return None if record is None else record.state


def _heartbeat_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith("langgraph_durable")
    ]


@pytest.fixture(params=KINDS)
def area(request: pytest.FixtureRequest) -> Area:
    return Area(request.param, request)


async def test_a_failed_runs_lease_is_released_when_the_saver_closes(
    area: Area, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="langgraph_durable")
    kept: list[BaseException] = []  # the failed run's traceback, still referenced
    if area.kind.endswith("sync"):
        with area.sync_cls().from_conn_string(area.url, **area.option, leases=FAST) as saver:
            saver.setup()
            try:
                _graph(saver, _fail).invoke({"n": 0}, _cfg("t-failed"))
            except RuntimeError as exc:
                kept.append(exc)
            assert area.lease_state("t-failed") == "running"  # the run's Runtime lives on
    else:
        async with area.async_cls().from_conn_string(area.url, **area.option, leases=FAST) as s:
            await s.setup()
            try:
                await _graph(s, _fail).ainvoke({"n": 0}, _cfg("t-failed"))
            except RuntimeError as exc:
                kept.append(exc)
            assert area.lease_state("t-failed") == "running"
    assert kept
    assert area.lease_state("t-failed") == "released"
    # no heartbeat outlives the saver: nothing is logged after it closed
    await asyncio.sleep(3 * HEARTBEAT)
    assert _heartbeat_errors(caplog) == []
    assert area.lease_state("t-failed") == "released"


async def test_a_cancelled_runs_lease_is_released_when_the_saver_closes(
    area: Area, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="langgraph_durable")
    if area.kind.endswith("sync"):
        # a sync graph's node runs in this thread: a cancelled run is one the
        # caller stopped with an exception LangGraph does not record (here a
        # KeyboardInterrupt raised by the node, as Ctrl-C would)
        def stop(state: State) -> State:
            raise KeyboardInterrupt

        with area.sync_cls().from_conn_string(area.url, **area.option, leases=FAST) as saver:
            saver.setup()
            with pytest.raises(KeyboardInterrupt) as info:
                _graph(saver, stop).invoke({"n": 0}, _cfg("t-cancelled"))
            assert area.lease_state("t-cancelled") == "running"
        assert info.value is not None
    else:
        async with area.async_cls().from_conn_string(area.url, **area.option, leases=FAST) as s:
            await s.setup()
            started = asyncio.Event()
            graph = _graph(s, _hanging(started))
            task = asyncio.ensure_future(graph.ainvoke({"n": 0}, _cfg("t-cancelled")))
            await asyncio.wait_for(started.wait(), 10)
            assert area.lease_state("t-cancelled") == "running"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    assert area.lease_state("t-cancelled") == "released"
    await asyncio.sleep(3 * HEARTBEAT)
    assert _heartbeat_errors(caplog) == []


async def test_close_releases_on_a_connection_of_ones_own(area: Area) -> None:
    if area.kind.endswith("sync"):
        with area.sync_cls().from_conn_string(area.url, **area.option, leases=FAST) as outer:
            saver = outer.__class__(
                outer.conn if area.kind.startswith(POSTGRES) else outer.client,
                **area.option,
                leases=FAST,
            )
            saver.setup()
            with pytest.raises(RuntimeError):
                _graph(saver, _fail).invoke({"n": 0}, _cfg("t-own"))
            assert area.lease_state("t-own") == "running"
            saver.close()
            assert area.lease_state("t-own") == "released"
    else:
        async with area.async_cls().from_conn_string(area.url, **area.option, leases=FAST) as outer:
            saver = outer.__class__(
                outer.conn if area.kind.startswith(POSTGRES) else outer.client,
                **area.option,
                leases=FAST,
            )
            await saver.setup()
            with pytest.raises(RuntimeError):
                await _graph(saver, _fail).ainvoke({"n": 0}, _cfg("t-own"))
            assert area.lease_state("t-own") == "running"
            await saver.aclose()
            assert area.lease_state("t-own") == "released"
