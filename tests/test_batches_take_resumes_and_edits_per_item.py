"""A batch is answered per item: by a Command(resume=...) with one decision per item (or one
for all), or by decide() with edit and respond decisions, each recorded once and audited."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from langgraph_durable.interrupts import (
    AlreadyDecided,
    DecisionNotAllowed,
    NotAuthorized,
    audit_log,
    decide,
    pending_approvals,
    request_batch_approval,
)
from tests import _approval_savers
from tests._approval_graphs import OrderState, orders
from tests._resume_graphs import ALL, as_user

approval_saver = _approval_savers.approval_saver


def batch_graph(saver: Any, allowed: list[str] = ALL) -> Any:
    def review_orders(state: OrderState) -> dict[str, Any]:
        result = request_batch_approval(
            state["orders"], key=lambda o: o["id"], approvers="ops", allowed_decisions=allowed
        )
        return {
            "to_ship": result.approved,
            "to_refund": result.rejected,
            "deciders": {k: [d.type, d.by, d.via] for k, d in result.decisions.items()},
        }

    builder = StateGraph(OrderState)
    builder.add_node("review_orders", review_orders)
    builder.add_edge(START, "review_orders")
    builder.add_edge("review_orders", END)
    return builder.compile(checkpointer=saver)


def cfg(thread_id: str = "b1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_the_interrupt_lists_one_action_request_per_item(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver)
    out = graph.invoke({"orders": orders(2)}, cfg())
    [intr] = out["__interrupt__"]
    assert [a["args"] for a in intr.value["action_requests"]] == [
        {"key": "o1", "id": "o1", "price": 10},
        {"key": "o2", "id": "o2", "price": 20},
    ]
    assert [r["allowed_decisions"] for r in intr.value["review_configs"]] == [ALL, ALL]


def test_a_hitl_response_decides_each_item_in_order(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver)
    graph.invoke({"orders": orders(3)}, cfg())
    edited = {"key": "o2", "id": "o2", "price": 15}
    resume = {
        "decisions": [
            {"type": "approve"},
            {"type": "edit", "edited_action": {"name": "approve_item", "args": edited}},
            {"type": "reject", "message": "out of stock"},
        ]
    }
    out = graph.invoke(Command(resume=resume), as_user("b1", "ops"))
    assert out["to_ship"] == [{"id": "o1", "price": 10}, {"id": "o2", "price": 15}]
    assert out["to_refund"] == [{"id": "o3", "price": 30}]
    assert out["deciders"] == {
        "o1": ["approve", "ops", "resume"],
        "o2": ["edit", "ops", "resume"],
        "o3": ["reject", "ops", "resume"],
    }
    recorded = [e for e in audit_log(approval_saver, thread_id="b1") if e.outcome == "recorded"]
    assert sorted((e.item, e.action) for e in recorded if e.item) == [
        ("o1", "approve"),
        ("o2", "edit"),
        ("o3", "reject"),
    ]
    assert pending_approvals(approval_saver) == []


def test_true_decides_every_item_and_a_second_resume_loses(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver)
    graph.invoke({"orders": orders(2)}, cfg())
    decide(approval_saver, cfg(), {"o1": False}, by="ops", resume=False)
    out = graph.invoke(Command(resume=True), as_user("b1", "ops"))
    # o1 keeps the decision made first; the resume decided o2
    assert out["to_refund"] == [{"id": "o1", "price": 10}]
    assert out["to_ship"] == [{"id": "o2", "price": 20}]


def test_a_resume_of_a_completed_batch_loses(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver)
    graph.invoke({"orders": orders(2)}, cfg())
    decide(approval_saver, cfg(), {"o1": True, "o2": True}, by="ops", resume=False)
    with pytest.raises(AlreadyDecided):
        graph.invoke(Command(resume=False), as_user("b1", "ops"))


def test_refused_batch_resumes_record_nothing(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver, allowed=["approve", "reject"])
    graph.invoke({"orders": orders(2)}, cfg())
    with pytest.raises(NotAuthorized, match="names no decider"):
        graph.invoke(Command(resume=True), cfg())
    respond_all = {"decisions": [{"type": "approve"}, {"type": "respond", "message": "?"}]}
    with pytest.raises(DecisionNotAllowed, match="'o2'"):
        graph.invoke(Command(resume=respond_all), as_user("b1", "ops"))
    [batch] = pending_approvals(approval_saver)
    assert not any(i.decided for i in batch.items)
    out = graph.invoke(Command(resume=[{"type": "accept", "args": None}] * 2), as_user("b1", "ops"))
    assert len(out["to_ship"]) == 2


def test_decide_takes_edit_and_respond_per_item(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver)
    graph.invoke({"orders": orders(3)}, cfg())
    result = decide(
        graph,
        cfg(),
        {
            "o1": "approve",
            "o2": {"type": "edit", "args": {"id": "o2", "price": 1}},
            "o3": {"type": "respond", "message": "call me"},
        },
        by="ops",
    )
    assert result.completed
    assert result.result["to_ship"] == [{"id": "o1", "price": 10}, {"id": "o2", "price": 1}]
    assert result.result["deciders"]["o3"] == ["respond", "ops", "api"]


def test_decide_refuses_an_item_decision_the_batch_does_not_allow(approval_saver: Any) -> None:
    graph = batch_graph(approval_saver, allowed=["approve", "reject"])
    graph.invoke({"orders": orders(2)}, cfg())
    with pytest.raises(DecisionNotAllowed, match="'o2'"):
        decide(graph, cfg(), {"o1": True, "o2": {"type": "edit", "args": {}}}, by="ops")
    [batch] = pending_approvals(approval_saver)
    assert not any(i.decided for i in batch.items)
