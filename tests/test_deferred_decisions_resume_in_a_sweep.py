"""approve(..., resume=False): a decision recorded without the graph, resumed by a sweep.

An approval UI does not host the graph: it records the decision (exactly once,
authorized as always) with the saver alone, and the worker's next sweep resumes
the run with it at once, whatever the sweeper's lease.
"""

from __future__ import annotations

import operator
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    Decision,
    NotAuthorized,
    aapprove,
    adecide,
    approve,
    decide,
    pending_approvals,
    reject,
    request_approval,
)
from tests import _approval_savers
from tests._approval_graphs import FakeClock, order_graph, orders, review_graph
from tests._backends import BACKENDS

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def cfg(thread_id: str, clock: Any = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if clock is not None:
        configurable["__durable_clock__"] = clock
    return {"configurable": configurable}


def test_a_deferred_approval_is_resumed_by_the_next_sweep(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, open_to_all=False)
    graph.invoke({"amount": 120}, cfg("t-def", clock))
    clock.advance(timedelta(minutes=2))

    # the saver alone, no graph: a process that only records decisions
    decision = approve(
        approval_saver,
        cfg("t-def"),
        by="alice",
        roles=["ops"],
        comment="ok",
        clock=clock,
        resume=False,
    )
    assert isinstance(decision, Decision)
    assert (decision.approved, decision.by, decision.comment) == (True, "alice", "ok")

    # recorded, not resumed: the thread still waits and the inbox still lists it
    assert graph.get_state(cfg("t-def")).next == ("review",)
    assert [i.thread_id for i in pending_approvals(approval_saver)] == ["t-def"]
    # exactly once: a second decider is told who won, and nothing changes
    with pytest.raises(AlreadyDecided) as err:
        reject(approval_saver, cfg("t-def"), by="bob", roles=["ops"], clock=clock, resume=False)
    assert err.value.decision["by"] == "alice"

    # a sweep long before the deadline (and with a long lease) resumes it at once
    sweeper = ApprovalSweeper(graph, clock=clock, lease=timedelta(hours=1))
    assert sweeper.run_once() == 1
    state = graph.get_state(cfg("t-def"))
    assert state.next == ()
    assert state.values["approved"] is True
    assert state.values["by"] == "alice"
    assert state.values["timed_out"] is False
    assert state.values["done"] == ["act"]
    assert pending_approvals(approval_saver) == []
    assert sweeper.run_once() == 0


def test_a_deferred_decision_is_still_authorized(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False)
    graph.invoke({"amount": 5}, cfg("t-auth"))
    with pytest.raises(NotAuthorized):
        approve(approval_saver, cfg("t-auth"), by="mallory", resume=False)
    # nothing was recorded: a sweep has nothing to resume, the thread still waits
    assert ApprovalSweeper(graph).run_once() == 0
    assert graph.get_state(cfg("t-auth")).next == ("review",)
    approve(approval_saver, cfg("t-auth"), by="carol", roles=["ops"], resume=False)
    assert ApprovalSweeper(graph).run_once() == 1
    assert graph.get_state(cfg("t-auth")).values["by"] == "carol"


def test_resuming_needs_the_graph(approval_saver: Any) -> None:
    graph = review_graph(approval_saver)
    graph.invoke({"amount": 5}, cfg("t-graph"))
    with pytest.raises(ValueError, match="resume=False"):
        approve(approval_saver, cfg("t-graph"), by="alice")
    # the failed call recorded nothing
    assert approve(graph, cfg("t-graph"), by="alice")["approved"] is True


async def test_a_deferred_approval_async(async_approval_saver: Any) -> None:
    graph = review_graph(async_approval_saver)
    await graph.ainvoke({"amount": 7}, cfg("t-adef"))
    decision = await aapprove(
        async_approval_saver, cfg("t-adef"), by="dora", roles=["ops"], resume=False
    )
    assert decision.by == "dora"
    assert (await graph.aget_state(cfg("t-adef"))).next == ("review",)
    assert await ApprovalSweeper(graph, lease=timedelta(hours=1)).arun_once() == 1
    state = await graph.aget_state(cfg("t-adef"))
    assert state.values["by"] == "dora"
    assert state.next == ()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copied_thread_with_a_deferred_decision_is_resumed_at_once(
    request: pytest.FixtureRequest, backend: str
) -> None:
    # copy_thread carries the decision and its claim: the copy, like the source,
    # is resumed by the next sweep, not one lease later
    url, options = _approval_savers.saver_url(request, backend)
    with _approval_savers.open_sync(backend, url, options) as saver:
        clock = FakeClock()
        graph = review_graph(saver)
        graph.invoke({"amount": 4}, cfg("t-src", clock))
        approve(saver, cfg("t-src"), by="erin", roles=["ops"], clock=clock, resume=False)
        saver.copy_thread("t-src", "t-copy")
        sweeper = ApprovalSweeper(graph, clock=clock, lease=timedelta(hours=1))
        assert sweeper.run_once() == 2
        for t in ("t-src", "t-copy"):
            state = graph.get_state(cfg(t))
            assert (state.next, state.values["by"]) == ((), "erin"), t


class Two(TypedDict, total=False):
    out: Annotated[list[str], operator.add]


def test_the_saver_alone_sees_what_the_graph_sees_pending(approval_saver: Any) -> None:
    # two approvals pending in one step; once one is answered and its node has
    # finished, the saver-alone path (no graph) must see one pending, as
    # graph.get_state does, not the answered one as well
    def ask(name: str) -> Any:
        def node(state: Two) -> dict[str, Any]:
            d = request_approval({"pay": name})
            return {"out": [f"{name}:{d.by}"]}

        return node

    b = StateGraph(Two)
    for name in ("a", "b"):
        b.add_node(name, ask(name))
        b.add_edge(START, name)
        b.add_edge(name, END)
    graph = b.compile(checkpointer=approval_saver)
    graph.invoke({}, cfg("t-two"))
    first, second = (i.id for i in graph.get_state(cfg("t-two")).interrupts)
    approve(graph, cfg("t-two"), by="ann", approval_id=first)
    assert [i.id for i in graph.get_state(cfg("t-two")).interrupts] == [second]

    decision = approve(approval_saver, cfg("t-two"), by="ben", resume=False)
    assert (decision.approval_id, decision.by) == (second, "ben")
    assert ApprovalSweeper(graph, lease=timedelta(hours=1)).run_once() == 1
    state = graph.get_state(cfg("t-two"))
    assert state.next == () and sorted(state.values["out"]) == ["a:ann", "b:ben"]


def test_a_policy_set_on_the_saver_applies_to_saver_alone_decisions(
    approval_saver: Any,
) -> None:
    from langgraph_durable.interrupts import set_authorization

    graph = review_graph(approval_saver, open_to_all=False)
    graph.invoke({"amount": 9}, cfg("t-pol"))
    # the graph's policy does not travel with the saver: the default refuses an outsider
    with pytest.raises(NotAuthorized):
        approve(approval_saver, cfg("t-pol"), by="zed", resume=False)
    set_authorization(approval_saver, lambda decider, request: decider.id == "zed")
    assert approve(approval_saver, cfg("t-pol"), by="zed", resume=False).by == "zed"
    assert ApprovalSweeper(graph).run_once() == 1
    assert graph.get_state(cfg("t-pol")).values["by"] == "zed"


def test_a_deferred_batch_is_resumed_by_the_next_sweep(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(3)}, cfg("t-bat", clock))

    # the saver alone records item decisions; the batch stays open meanwhile
    first = decide(
        approval_saver, cfg("t-bat"), {"o1": True}, by="alice", clock=clock, resume=False
    )
    assert (first.applied, first.deferred, first.completed) == (["o1"], False, False)
    assert ApprovalSweeper(graph, clock=clock, lease=timedelta(hours=1)).run_once() == 0
    last = decide(
        approval_saver, cfg("t-bat"), {"o2": True, "o3": False}, by="bob", clock=clock, resume=False
    )
    assert sorted(last.applied) == ["o2", "o3"]
    assert (last.deferred, last.completed, last.result) == (True, False, None)

    # recorded, not resumed: the thread still waits, and the batch is decided
    assert graph.get_state(cfg("t-bat")).next == ("review_orders",)
    with pytest.raises(AlreadyDecided):
        decide(approval_saver, cfg("t-bat"), {"o3": True}, by="carl", resume=False)

    # the next sweep resumes it at once, long before the deadline and the lease
    sweeper = ApprovalSweeper(graph, clock=clock, lease=timedelta(hours=1))
    assert sweeper.run_once() == 1
    state = graph.get_state(cfg("t-bat"))
    assert state.next == ()
    assert [o["id"] for o in state.values["to_ship"]] == ["o1", "o2"]
    assert [o["id"] for o in state.values["to_refund"]] == ["o3"]
    assert state.values["deciders"]["o1"][0] == "alice"
    assert state.values["deciders"]["o3"][0] == "bob"
    assert pending_approvals(approval_saver) == []
    assert sweeper.run_once() == 0


async def test_a_deferred_batch_async(async_approval_saver: Any) -> None:
    graph = order_graph(async_approval_saver)
    await graph.ainvoke({"orders": orders(2)}, cfg("t-abat"))
    out = await adecide(
        async_approval_saver, cfg("t-abat"), {"o1": True, "o2": True}, by="dora", resume=False
    )
    assert out.deferred and not out.completed
    assert (await graph.aget_state(cfg("t-abat"))).next == ("review_orders",)
    assert await ApprovalSweeper(graph, lease=timedelta(hours=1)).arun_once() == 1
    state = await graph.aget_state(cfg("t-abat"))
    assert state.next == ()
    assert [o["id"] for o in state.values["to_ship"]] == ["o1", "o2"]


def test_a_batch_needs_the_graph_to_resume(approval_saver: Any) -> None:
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(1)}, cfg("t-bgr"))
    with pytest.raises(ValueError, match="resume=False"):
        decide(approval_saver, cfg("t-bgr"), {"o1": True}, by="alice")
    assert decide(graph, cfg("t-bgr"), {"o1": True}, by="alice").completed
