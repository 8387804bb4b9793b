"""A failure after committed steps undoes them in reverse order, each once."""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_durable.interrupts import Compensate, add_compensation, compensable
from tests import _saga_graphs as g
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def ledger() -> g.ListLedger:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    return g.LEDGER


def test_ship_fails_refund_then_release_each_once(saga_saver: Any, ledger: g.ListLedger) -> None:
    graph = g.build_order_graph().compile(checkpointer=saga_saver)
    config = {"configurable": {"thread_id": "order-1"}}

    final = graph.invoke({"order_id": "o1", "amount": 42}, config)

    # ship ran twice (its retry policy), then the undos ran newest first, once each
    assert ledger.call_names() == ["reserve", "charge_api", "ship", "ship", "refund", "release"]
    saga = final["saga"]
    assert saga["status"] == "compensated"
    assert saga["reason"] == "RuntimeError: carrier API down"
    assert saga["failure"] == {
        "node": "ship",
        "type": "RuntimeError",
        "message": "carrier API down",
    }
    assert [(s["node"], s["status"]) for s in saga["steps"]] == [
        ("reserve_inventory", "compensated"),
        ("charge_card", "compensated"),
    ]
    # the undos got the arguments recorded from the steps' outputs
    assert ledger.effects[("release", saga_key(ledger, "release"))] == "res-o1"
    assert ledger.effects[("refund", saga_key(ledger, "refund"))] == final["charge_id"]
    assert "shipped" not in final
    # the whole log is plain data
    json.dumps(saga)
    assert graph.get_state(config).next == ()


def saga_key(ledger: g.ListLedger, what: str) -> str | None:
    keys = [k for w, k in ledger.calls if w == what]
    assert len(keys) == 1
    return keys[0]


def test_compensate_reason_is_in_the_final_state_and_not_retried(
    saga_saver: Any, ledger: g.ListLedger
) -> None:
    class State(TypedDict, total=False):
        order_id: str
        reservation_id: str
        charge_id: str
        amount: int

    reviewed: list[str] = []

    def review(state: State) -> dict[str, Any]:
        reviewed.append(state["order_id"])
        raise Compensate("order rejected by the approver")

    from langgraph.types import RetryPolicy

    builder = g.reviewed_order(
        review,
        state=State,  # no SagaState mixin: add_compensation adds the key
        review_retry=RetryPolicy(max_attempts=5, retry_on=Exception),
    )
    graph = add_compensation(builder).compile(checkpointer=saga_saver)

    final = graph.invoke({"order_id": "o2"}, {"configurable": {"thread_id": "order-2"}})

    assert reviewed == ["o2"]  # Compensate is a decision, not a fault: never retried
    assert "ship" not in ledger.call_names()
    assert ledger.call_names()[-2:] == ["refund", "release"]
    assert final["saga"]["status"] == "compensated"
    assert final["saga"]["reason"] == "order rejected by the approver"
    assert final["saga"]["failure"]["node"] == "review"


def test_parallel_branch_stops_once_compensation_starts(saga_saver: Any) -> None:
    class State(TypedDict, total=False):
        log: Annotated[list[str], operator.add]

    undone: list[str] = []

    def undo_a(state: Any, result: Any) -> None:
        undone.append("a")

    @compensable(undo=undo_a, name="tests.parallel.undo_a")
    def a(state: State) -> dict[str, Any]:
        return {"log": ["a"]}

    def fails(state: State) -> dict[str, Any]:
        raise Compensate("b said no")

    def after_a(state: State) -> dict[str, Any]:
        return {"log": ["after_a"]}

    def after_after(state: State) -> dict[str, Any]:
        return {"log": ["after_after"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", fails)
    builder.add_node("after_a", after_a)
    builder.add_node("after_after", after_after)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", "after_a")
    builder.add_edge("after_a", "after_after")
    builder.add_conditional_edges("after_after", lambda s: END)
    graph = add_compensation(builder).compile(checkpointer=saga_saver)

    final = graph.invoke({"log": []}, {"configurable": {"thread_id": "par"}})

    # a committed in the same superstep as b's failure, so it is undone, and
    # the forward branch after it never runs
    assert final["log"] == ["a"]
    assert undone == ["a"]
    assert final["saga"]["status"] == "compensated"


def test_async_graph_compensates_with_async_undos() -> None:
    saver = InMemorySaver()
    order: list[str] = []

    async def aundo_one(state: Any, result: Any) -> None:
        await asyncio.sleep(0)
        order.append("one")

    def undo_two(state: Any, result: Any) -> None:
        order.append("two")

    class State(TypedDict, total=False):
        n: int

    @compensable(undo=aundo_one, name="tests.async.undo_one")
    async def one(state: State) -> dict[str, Any]:
        return {"n": 1}

    @compensable(undo=undo_two, name="tests.async.undo_two")
    async def two(state: State) -> dict[str, Any]:
        return {"n": 2}

    async def boom(state: State) -> dict[str, Any]:
        raise KeyError("missing sku")

    builder = StateGraph(State)
    builder.add_node("one", one)
    builder.add_node("two", two)
    builder.add_node("boom", boom)
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", "boom")
    graph = add_compensation(builder).compile(checkpointer=saver)

    final = asyncio.run(graph.ainvoke({"n": 0}, {"configurable": {"thread_id": "async"}}))

    assert order == ["two", "one"]
    assert final["saga"]["status"] == "compensated"
    assert final["saga"]["failure"]["type"] == "KeyError"
