"""What was approved is what was shown on every saver.

The node re-runs on resume; when the payload it computes now differs from the
one that was decided (the price changed during the wait), the stale decision
is not applied: by default the helper asks again with the new payload and the
decision keeps the stale round in its history; ``on_stale="raise"`` raises
``StaleApproval`` carrying both payloads.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    StaleApproval,
    approve,
    decide,
    pending_approvals,
    request_approval,
    request_batch_approval,
)
from tests import _approval_savers

approval_saver = _approval_savers.approval_saver


class RefundState(TypedDict, total=False):
    amount: int
    decision: dict[str, Any]


def refund_graph(saver: Any, prices: dict[str, int], on_stale: Any = "reask") -> Any:
    """One node asks to refund the current price of ``x`` (``prices`` may change)."""

    def review(state: RefundState) -> dict[str, Any]:
        d = request_approval({"refund": prices["x"]}, on_stale=on_stale)
        return {"decision": d.model_dump(mode="json")}

    builder = StateGraph(RefundState)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


CFG = {"configurable": {"thread_id": "stale-1"}}


def test_a_changed_payload_is_asked_again_and_both_rounds_are_kept(approval_saver: Any) -> None:
    prices = {"x": 100}
    graph = refund_graph(approval_saver, prices)
    graph.invoke({"amount": 1}, CFG)
    prices["x"] = 250  # the price changed while the approval waited
    out = approve(graph, CFG, by="alice")
    assert "__interrupt__" in out and "decision" not in out  # not applied: asked again
    [item] = pending_approvals(approval_saver)
    assert item.request == {"refund": 250}
    final = approve(graph, CFG, by="bob")["decision"]
    assert final["approved"] is True and final["by"] == "bob"
    [stale] = final["history"]
    assert stale["by"] == "alice" and stale["request"] == {"refund": 100}
    assert pending_approvals(approval_saver) == []


def test_on_stale_raise_carries_both_payloads(approval_saver: Any) -> None:
    prices = {"x": 100}
    graph = refund_graph(approval_saver, prices, on_stale="raise")
    graph.invoke({"amount": 1}, CFG)
    prices["x"] = 250
    with pytest.raises(StaleApproval) as caught:
        approve(graph, CFG, by="alice")
    assert caught.value.decided_request == {"refund": 100}
    assert caught.value.current_request == {"refund": 250}
    assert caught.value.decision["by"] == "alice" and caught.value.item is None
    # the message names the thread (the approver's call raised it, far from the node)
    thread_id = CFG["configurable"]["thread_id"]
    assert caught.value.thread_id == thread_id and repr(thread_id) in str(caught.value)


def test_batch_on_stale_raise_names_the_item(approval_saver: Any) -> None:
    prices = {"o1": 10, "o2": 20}

    class OrderState(TypedDict, total=False):
        shipped: list[str]

    def review_orders(state: OrderState) -> dict[str, Any]:
        orders = [{"id": k, "price": v} for k, v in sorted(prices.items())]
        result = request_batch_approval(orders, key=lambda o: o["id"], on_stale="raise")
        return {"shipped": [o["id"] for o in result.approved]}

    builder = StateGraph(OrderState)
    builder.add_node("review_orders", review_orders)
    builder.add_edge(START, "review_orders")
    builder.add_edge("review_orders", END)
    graph = builder.compile(checkpointer=approval_saver)
    graph.invoke({}, CFG)
    prices["o2"] = 99
    with pytest.raises(StaleApproval) as caught:
        decide(graph, CFG, {"o1": True, "o2": True}, by="alice")
    assert caught.value.item == "o2"
    assert caught.value.decided_request == {"id": "o2", "price": 20}
    assert caught.value.current_request == {"id": "o2", "price": 99}
    thread_id = CFG["configurable"]["thread_id"]
    assert caught.value.thread_id == thread_id
    assert repr(thread_id) in str(caught.value) and "'o2'" in str(caught.value)
