"""The saver sees the end of a run in every graph shape: the lease is back when invoke returns."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt

from langgraph_durable.checkpointers._run_book import may_have_next
from tests._backends import BACKENDS
from tests._lease_support import leasing_saver, settings, where_of
from tests._parts import part_of


class S(TypedDict):
    items: Annotated[list[str], operator.add]


def _fanout() -> StateGraph[Any]:
    g: StateGraph[Any] = StateGraph(S)
    g.add_node("work", lambda s: {"items": [s["x"]]})  # type: ignore[index]
    g.add_node("sum", lambda s: {"items": ["sum"]})
    g.add_conditional_edges(START, lambda s: [Send("work", {"x": str(i)}) for i in range(3)])
    g.add_edge("work", "sum")
    g.add_edge("sum", END)
    return g


def _join() -> StateGraph[Any]:
    g: StateGraph[Any] = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, n=name: {"items": [n]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", END)
    return g


def _subgraph() -> StateGraph[Any]:
    inner: StateGraph[Any] = StateGraph(S)
    inner.add_node("deep", lambda s: {"items": ["deep"]})
    inner.add_edge(START, "deep")
    g: StateGraph[Any] = StateGraph(S)
    g.add_node("child", inner.compile())
    g.add_node("after", lambda s: {"items": ["after"]})
    g.add_edge(START, "child")
    g.add_edge("child", "after")
    return g


def _parallel_interrupt() -> StateGraph[Any]:
    def ask(s: S) -> dict[str, Any]:
        return {"items": [f"answer:{interrupt('ok?')}"]}

    g: StateGraph[Any] = StateGraph(S)
    g.add_node("ask", ask)
    g.add_node("other", lambda s: {"items": ["other"]})
    g.add_edge(START, "ask")
    g.add_edge(START, "other")
    return g


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", ["fanout", "join", "subgraph"])
def test_finished_runs_release_their_lease(
    backend: str, shape: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    builder = {"fanout": _fanout, "join": _join, "subgraph": _subgraph}[shape]()
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"items": []}, {"configurable": {"thread_id": shape}})
        record = part_of(saver, "leases").get_lease(thread_id=shape)
        assert (record.state, record.reason) == ("released", "finished")
        assert not saver.run_leases.holds(shape)
        latest = saver.get_tuple({"configurable": {"thread_id": shape}})
        assert not may_have_next(latest.checkpoint)


@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_api_and_parallel_interrupt(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(30, 10)) as saver:

        @task
        def double(x: int) -> int:
            return 2 * x

        @entrypoint(checkpointer=saver)
        def flow(x: int) -> int:
            return double(x).result() + 1

        assert flow.invoke(4, {"configurable": {"thread_id": "func"}}) == 9
        assert part_of(saver, "leases").get_lease(thread_id="func").state == "released"

        graph = _parallel_interrupt().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "pi"}}
        graph.invoke({"items": []}, config)
        record = part_of(saver, "leases").get_lease(thread_id="pi")
        assert (record.state, record.reason) == ("released", "interrupted")
        out = graph.invoke(Command(resume="yes"), config)
        assert sorted(out["items"]) == ["answer:yes", "other"]
        record = part_of(saver, "leases").get_lease(thread_id="pi")
        assert (record.state, record.token) == ("released", 2)
        assert not saver.run_leases.holds("pi")
