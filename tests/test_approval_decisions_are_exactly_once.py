"""approve/reject record a decision with compare-and-set, then resume the run once."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    AlreadyDecided,
    AmbiguousApproval,
    ApprovalSweeper,
    NoPendingApproval,
    aapprove,
    apending_approvals,
    approval_health,
    approve,
    areject,
    pending_approvals,
    reject,
)
from tests import _approval_savers
from tests._approval_graphs import T0, FakeClock, review_graph

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_approve_resumes_the_run_with_the_decision(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver)
    first = graph.invoke(
        {"amount": 120}, {"configurable": {"thread_id": "t1", "__durable_clock__": clock}}
    )
    assert "__interrupt__" in first
    clock.advance(timedelta(minutes=3))
    result = approve(graph, cfg("t1"), by="alice", comment="ok", clock=clock)
    assert result["approved"] is True
    assert result["by"] == "alice"
    assert result["comment"] == "ok"
    assert result["timed_out"] is False
    assert result["done"] == ["act"]
    assert pending_approvals(approval_saver) == []


def test_reject_resumes_with_a_rejection(approval_saver: Any) -> None:
    graph = review_graph(approval_saver)
    graph.invoke({"amount": 5}, cfg("t1"))
    result = reject(graph, cfg("t1"), by="bob", comment="no")
    assert (result["approved"], result["by"], result["comment"]) == (False, "bob", "no")


def test_ten_concurrent_approvers_resume_once(approval_saver: Any) -> None:
    resumes: list[str] = []
    graph = review_graph(approval_saver, after=lambda s: resumes.append(s["by"]))
    graph.invoke({"amount": 1}, cfg("t1"))
    barrier = threading.Barrier(10)
    outcomes: list[Any] = [None] * 10

    def one(i: int) -> None:
        barrier.wait()
        try:
            outcomes[i] = approve(graph, cfg("t1"), by=f"user{i}")
        except AlreadyDecided as exc:
            outcomes[i] = exc

    workers = [threading.Thread(target=one, args=(i,)) for i in range(10)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wins = [o for o in outcomes if isinstance(o, dict)]
    losses = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    assert len(wins) == 1 and len(losses) == 9
    assert resumes == [wins[0]["by"]]
    assert {exc.by for exc in losses} == {wins[0]["by"]}
    assert all(exc.at is not None and not exc.timed_out for exc in losses)


def test_a_decision_after_the_timeout_gets_already_decided_timed_out(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver)
    graph.invoke({"amount": 1}, {"configurable": {"thread_id": "t1", CLOCK_CONFIG_KEY: clock}})
    approval_id = pending_approvals(approval_saver)[0].approval_id
    clock.advance(timedelta(minutes=16))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    with pytest.raises(AlreadyDecided) as caught:
        approve(graph, cfg("t1"), by="alice", clock=clock)
    assert caught.value.timed_out and caught.value.by == "system"
    with pytest.raises(AlreadyDecided) as caught:
        approve(graph, cfg("t1"), by="alice", approval_id=approval_id, clock=clock)
    assert caught.value.timed_out and caught.value.approval_id == approval_id


def test_nothing_pending_and_several_pending_are_clear_errors(approval_saver: Any) -> None:
    graph = review_graph(approval_saver)
    with pytest.raises(NoPendingApproval):
        approve(graph, cfg("nobody"), by="alice")
    graph.invoke({"amount": 1}, cfg("t1"))
    with pytest.raises(NoPendingApproval):
        approve(graph, cfg("t1"), by="alice", approval_id="no-such-id")
    # two parallel reviews on one thread
    from langgraph.graph import END, START, StateGraph

    from langgraph_durable.interrupts import request_approval
    from tests._approval_graphs import ReviewState

    def a(state: ReviewState) -> dict[str, Any]:
        return {"done": ["a" if request_approval({"x": "a"}).approved else "-"]}

    def b(state: ReviewState) -> dict[str, Any]:
        return {"done": ["b" if request_approval({"x": "b"}).approved else "-"]}

    builder = StateGraph(ReviewState)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", END)
    builder.add_edge("b", END)
    two = builder.compile(checkpointer=approval_saver)
    two.invoke({"amount": 1}, cfg("t2"))
    with pytest.raises(AmbiguousApproval) as caught:
        approve(two, cfg("t2"), by="alice")
    ids = caught.value.approval_ids
    assert len(ids) == 2
    approve(two, cfg("t2"), by="alice", approval_id=ids[0])
    final = reject(two, cfg("t2"), by="bob", approval_id=ids[1])
    assert sorted(final["done"]) in (["-", "a"], ["-", "b"])


def test_inbox_lists_pending_approvals_for_an_approver(approval_saver: Any) -> None:
    clock = FakeClock()
    ops = review_graph(approval_saver, approvers=("ops",))
    fin = review_graph(approval_saver, approvers=("finance",))
    conf = {"configurable": {"thread_id": "o1", "__durable_clock__": clock}}
    ops.invoke({"amount": 10}, conf)
    clock.advance(timedelta(minutes=1))
    fin.invoke({"amount": 20}, {"configurable": {"thread_id": "f1", "__durable_clock__": clock}})
    items = pending_approvals(approval_saver, approver="ops")
    assert [i.thread_id for i in items] == ["o1"]
    item = items[0]
    assert item.request == {"action": "refund", "amount": 10}
    assert item.requested_at == T0
    assert item.deadline == T0 + timedelta(minutes=15)
    assert item.approvers == ["ops"] and item.escalation_level == 0
    assert item.model_dump(mode="json")["deadline"].startswith("2026-11-29T09:15")
    assert {i.thread_id for i in pending_approvals(approval_saver)} == {"o1", "f1"}
    clock.advance(timedelta(minutes=14, seconds=30))  # o1 30 s overdue, f1 not yet
    health = approval_health(approval_saver, clock=clock)
    assert (health.waiting, health.overdue) == (2, 1)
    assert health.oldest_overdue_age == timedelta(seconds=30)


async def test_async_twins(async_approval_saver: Any) -> None:
    graph = review_graph(async_approval_saver)
    await graph.ainvoke({"amount": 3}, cfg("a1"))
    await graph.ainvoke({"amount": 4}, cfg("a2"))
    assert len(await apending_approvals(async_approval_saver)) == 2
    assert (await aapprove(graph, cfg("a1"), by="alice"))["approved"] is True
    assert (await areject(graph, cfg("a2"), by="bob"))["approved"] is False
    with pytest.raises(AlreadyDecided):
        await aapprove(graph, cfg("a2"), by="carol")
