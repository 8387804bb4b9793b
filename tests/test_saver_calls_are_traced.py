"""Every saver call of a real graph is a ``checkpoint.*`` span with its attributes, and timed."""

from __future__ import annotations

import operator
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_durable.checkpointers._otel import configure_telemetry
from tests._approval_savers import open_sync, saver_url
from tests._otel_support import Telemetry


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    # small items on a large start: the list is stored as deltas
    def add(state: State) -> dict[str, Any]:
        return {"items": ["x" * 20]}

    builder = StateGraph(State)
    for name in "abc":
        builder.add_node(name, add)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=["postgres", "redis"])
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A set-up sync saver of each backend, isolated for this test."""
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as opened:
        yield opened


@pytest.fixture(params=["postgres", "redis"])
async def async_saver(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A set-up async saver of each backend, isolated for this test."""
    url, options = saver_url(request, request.param)
    if request.param == "postgres":
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url, **options) as opened:
            await opened.setup()
            yield opened
    else:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(url, **options) as opened:
            await opened.setup()
            yield opened


SYSTEMS = {"PostgresSaver": "postgresql", "AsyncPostgresSaver": "postgresql"}


def _system(saver: Any) -> str:
    return SYSTEMS.get(type(saver).__name__, "redis")


def _check(otel: Telemetry, saver: Any, thread: str) -> None:
    system = _system(saver)
    for name in ("checkpoint.put", "checkpoint.put_writes", "checkpoint.get_tuple"):
        spans = otel.spans(name)
        assert spans, f"no {name} span"
        for s in spans:
            assert s.attributes["db.system"] == system
            assert s.attributes["langgraph.thread_id"] == thread
            assert s.attributes["langgraph.checkpoint_ns"] == ""
            assert s.kind.name == "CLIENT"
    puts = otel.spans("checkpoint.put")
    assert max(s.attributes["langgraph_durable.bytes_written"] for s in puts) > 2000
    assert all(s.attributes["langgraph_durable.rows"] >= 1 for s in puts)
    writes = [
        s for s in otel.spans("checkpoint.put_writes") if s.attributes["langgraph_durable.rows"]
    ]
    assert writes
    (listed,) = otel.spans("checkpoint.list")
    assert (
        listed.attributes["langgraph_durable.rows"] == 5
    )  # the empty start, the input, a, b and c
    assert listed.attributes["db.system"] == system
    (deleted,) = otel.spans("checkpoint.delete_thread")
    assert deleted.attributes["langgraph.thread_id"] == thread
    points = otel.collect()
    ops = {p.attributes["operation"] for p in points["langgraph_durable.saver.duration"]}
    assert {"put", "put_writes", "get_tuple", "list", "delete_thread"} <= ops
    sizes = points["langgraph_durable.saver.bytes"]
    assert any(p.attributes["operation"] == "put" and p.sum > 2000 for p in sizes)
    assert all(p.attributes["db.system"] == system for p in sizes)


def test_sync_saver_calls_are_spans(otel: Telemetry, saver: Any) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    graph = _graph(saver)
    graph.invoke({"items": ["s" * 2000]}, config)
    graph.get_state(config)
    assert len(list(saver.list(config))) == 5
    saver.delete_thread(thread)
    _check(otel, saver, thread)


async def test_async_saver_calls_are_spans(otel: Telemetry, async_saver: Any) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    graph = _graph(async_saver)
    await graph.ainvoke({"items": ["s" * 2000]}, config)
    await graph.aget_state(config)
    assert len([t async for t in async_saver.alist(config)]) == 5
    await async_saver.adelete_thread(thread)
    _check(otel, async_saver, thread)


def test_thread_ids_can_be_left_out(otel: Telemetry, saver: Any) -> None:
    configure_telemetry(thread_ids=False)
    graph = _graph(saver)
    graph.invoke({"items": ["s" * 2000]}, {"configurable": {"thread_id": "personal"}})
    spans = otel.spans()
    assert spans
    assert all("langgraph.thread_id" not in s.attributes for s in spans)
    assert all(s.attributes["langgraph.checkpoint_ns"] == "" for s in otel.spans("checkpoint.put"))


def test_nothing_is_recorded_when_turned_off(otel: Telemetry, saver: Any) -> None:
    configure_telemetry(enabled=False)
    _graph(saver).invoke({"items": ["s"]}, {"configurable": {"thread_id": "off"}})
    assert otel.spans() == []
    assert "langgraph_durable.saver.duration" not in otel.collect()


@pytest.mark.parametrize("backend", ["postgres", "redis"])
def test_a_read_reports_the_delta_chain_it_rebuilt(
    otel: Telemetry, backend: str, request: pytest.FixtureRequest
) -> None:
    url, options = saver_url(request, backend)
    config = {"configurable": {"thread_id": "chain"}}
    with open_sync(backend, url, options) as writer:
        _graph(writer).invoke({"items": ["s" * 2000]}, config)
    otel.exporter.clear()
    with open_sync(backend, url, options) as reader:  # a new saver: nothing cached
        assert len(reader.get_tuple(config).checkpoint["channel_values"]["items"]) == 4
    (read,) = otel.spans("checkpoint.get_tuple")
    assert read.attributes["langgraph_durable.delta_chain_length"] >= 2
    assert read.attributes["langgraph_durable.rows"] == 1
