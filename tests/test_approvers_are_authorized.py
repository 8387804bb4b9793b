"""Only allowed deciders decide: approvers, roles, policies, escalation levels, the requester."""

from __future__ import annotations

import operator
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    ApprovalSweeper,
    NotAuthorized,
    approve,
    audit_log,
    decide,
    pending_approvals,
    reject,
    request_approval,
    request_batch_approval,
    set_authorization,
)
from tests._approval_graphs import FakeClock, review_graph, two_level_escalation
from tests._approval_savers import approval_saver  # noqa: F401 - fixture

# ruff: noqa: F811 - the fixture is a parameter of every test


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def test_an_outsider_is_refused_and_the_thread_keeps_waiting(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=("ops",))
    graph.invoke({"amount": 5}, cfg("t1"))
    with pytest.raises(NotAuthorized) as caught:
        approve(graph, cfg("t1"), by="mallory")
    assert caught.value.by == "mallory" and caught.value.approvers == ["ops"]
    assert "t1" in str(caught.value) and "ops" in str(caught.value)
    # nothing recorded: the thread still waits and an allowed approver decides
    assert [i.thread_id for i in pending_approvals(approval_saver)] == ["t1"]
    done = approve(graph, cfg("t1"), by="olga", roles=["ops"])
    assert done["approved"] is True and done["by"] == "olga"


def test_the_user_id_itself_may_be_an_approver(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=("alice",))
    graph.invoke({"amount": 5}, cfg("t2"))
    with pytest.raises(NotAuthorized):
        reject(graph, cfg("t2"), by="bob", roles=["ops"])
    assert reject(graph, cfg("t2"), by="alice")["approved"] is False


def test_no_approvers_means_anyone(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=())
    graph.invoke({"amount": 5}, cfg("t3"))
    assert approve(graph, cfg("t3"), by="whoever")["approved"] is True


def test_a_graph_policy_and_a_per_call_policy(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=("ops",))
    seen: list[tuple[str, int]] = []

    def small_amounts_only(decider: Any, request: Any) -> bool:
        seen.append((decider.id, request.request["amount"]))
        return bool(request.request["amount"] < 100)

    set_authorization(graph, small_amounts_only)
    graph.invoke({"amount": 500}, cfg("t4"))
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t4"), by="olga", roles=["ops"])
    assert seen == [("olga", 500)]
    # a call's own policy wins over the graph's
    assert approve(graph, cfg("t4"), by="cfo", authorize=lambda d, r: d.id == "cfo")["by"] == "cfo"


def test_escalation_levels_carry_their_own_approvers(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(
        approval_saver, open_to_all=False, approvers=("ops",), on_timeout=two_level_escalation()
    )
    graph.invoke({"amount": 5}, cfg("t5", __durable_clock__=clock))
    clock.advance(timedelta(minutes=16))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1  # escalated to the manager
    with pytest.raises(NotAuthorized) as caught:
        approve(graph, cfg("t5"), by="olga", roles=["ops"], clock=clock)
    assert caught.value.approvers == ["manager"]
    assert approve(graph, cfg("t5"), by="mia", roles=["manager"], clock=clock)["approved"]


class Run(TypedDict, total=False):
    amount: int
    outcome: Annotated[list[str], operator.add]


def _sod_graph(saver: Any) -> Any:
    def review(state: Run) -> dict[str, Any]:
        d = request_approval({"amount": state["amount"]}, forbid=["requester"])
        return {"outcome": [f"{d.approved}:{d.by}"]}

    def review_batch(state: Run) -> dict[str, Any]:
        res = request_batch_approval(
            [{"id": "a"}, {"id": "b"}], key=lambda o: o["id"], forbid=["requester"]
        )
        return {"outcome": [f"batch:{len(res.approved)}"]}

    b = StateGraph(Run)
    b.add_node("review", review)
    b.add_node("review_batch", review_batch)
    b.add_edge(START, "review")
    b.add_edge("review", "review_batch")
    b.add_edge("review_batch", END)
    return b.compile(checkpointer=saver)


def test_the_requester_may_not_approve_their_own_run(approval_saver: Any) -> None:
    graph = _sod_graph(approval_saver)
    graph.invoke({"amount": 9}, cfg("t6", requested_by="rita"))
    with pytest.raises(NotAuthorized) as caught:
        approve(graph, cfg("t6"), by="rita")
    assert "separation of duties" in str(caught.value)
    approve(graph, cfg("t6", requested_by="rita"), by="sam")
    with pytest.raises(NotAuthorized):
        decide(graph, cfg("t6"), {"a": True, "b": True}, by="rita")
    out = decide(graph, cfg("t6", requested_by="rita"), {"a": True, "b": False}, by="sam")
    assert out.result["outcome"] == ["True:sam", "batch:1"]
    # every refusal and every decision is in the audit trail, in order; the items of
    # one decide call are compare-and-set concurrently, so their order is not defined
    trail = [
        (e.actor, e.action, e.item, e.outcome) for e in audit_log(approval_saver, thread_id="t6")
    ]
    assert trail[:5] == [
        ("rita", "request", None, "waiting"),
        ("rita", "approve", None, "not_authorized"),
        ("sam", "approve", None, "recorded"),
        ("rita", "request", None, "waiting"),
        ("rita", "decide", None, "not_authorized"),
    ]
    assert sorted(trail[5:], key=lambda t: str(t[2])) == [
        ("sam", "approve", "a", "recorded"),
        ("sam", "reject", "b", "recorded"),
    ]
    refusal = audit_log(approval_saver, thread_id="t6")[1]
    assert refusal.reason is not None and "separation of duties" in refusal.reason
