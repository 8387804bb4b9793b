"""A plain ``Command(resume=...)`` decides an approval like approve(): authorized, once, audited."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_durable.checkpointers import MULTITASK_KEY, ThreadBusy
from langgraph_durable.interrupts import (
    AlreadyDecided,
    DecisionNotAllowed,
    NotAuthorized,
    ResumeNotUnderstood,
    approve,
    audit_log,
    pending_approvals,
)
from tests import _approval_savers
from tests._resume_graphs import SideEffects, as_server_user, as_user, refund_graph

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


@pytest.fixture(params=[b for b in _approval_savers.APPROVAL_SAVERS if b != "memory"])
def leased_saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Our sync savers: they hold run leases, so they serialize runs of one thread."""
    url, options = _approval_savers.saver_url(request, request.param)
    with _approval_savers.open_sync(request.param, url, options) as saver:
        yield saver


EDITED = {"action": "refund", "amount": 7}

# (resume value, expected decision type, approved, edited, response, comment)
SHAPES: dict[str, tuple[Any, str, bool, Any, str | None, str | None]] = {
    "true": (True, "approve", True, None, None, None),
    "false": (False, "reject", False, None, None, None),
    "approve-text": ("approve", "approve", True, None, None, None),
    "reject-text": ("reject", "reject", False, None, None, None),
    "hitl-approve": ({"decisions": [{"type": "approve"}]}, "approve", True, None, None, None),
    "hitl-reject": (
        {"decisions": [{"type": "reject", "message": "too much"}]},
        "reject",
        False,
        None,
        None,
        "too much",
    ),
    "hitl-edit": (
        {"decisions": [{"type": "edit", "edited_action": {"name": "refund", "args": EDITED}}]},
        "edit",
        True,
        EDITED,
        None,
        None,
    ),
    "hitl-respond": (
        {"decisions": [{"type": "respond", "message": "ask finance"}]},
        "respond",
        False,
        None,
        "ask finance",
        None,
    ),
    "one-decision": ({"type": "approve"}, "approve", True, None, None, None),
    "legacy-accept": ([{"type": "accept", "args": None}], "approve", True, None, None, None),
    "legacy-ignore": ([{"type": "ignore", "args": None}], "reject", False, None, None, None),
    "legacy-edit": (
        [{"type": "edit", "args": {"action": "refund", "args": EDITED}}],
        "edit",
        True,
        EDITED,
        None,
        None,
    ),
    "legacy-response": (
        [{"type": "response", "args": "ask finance"}],
        "respond",
        False,
        None,
        "ask finance",
        None,
    ),
}


def _check(decision: dict[str, Any], expected: tuple[Any, ...], by: str) -> None:
    _, kind, approved, edited, response, comment = expected
    assert decision["type"] == kind
    assert decision["approved"] is approved
    assert decision["edited"] == edited
    assert decision["response"] == response
    assert decision["comment"] == comment
    assert decision["by"] == by
    assert decision["via"] == "resume"


def _recorded(saver: Any, thread_id: str) -> list[Any]:
    return [e for e in audit_log(saver, thread_id=thread_id) if e.outcome == "recorded"]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_accepted_shape_decides_once(approval_saver: Any, shape: str) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    out = graph.invoke(Command(resume=SHAPES[shape][0]), as_user("t1", "ops"))
    _check(out["decision"], SHAPES[shape], "ops")
    assert [d["type"] for d in effects.done] == [SHAPES[shape][1]]
    assert pending_approvals(approval_saver) == []
    [entry] = _recorded(approval_saver, "t1")
    assert (entry.actor, entry.action) == ("ops", SHAPES[shape][1])
    assert entry.reason is not None and "via resume" in entry.reason


@pytest.mark.parametrize("shape", ["true", "hitl-edit", "hitl-respond", "legacy-accept"])
async def test_async_nodes_decide_with_arequest_approval(
    async_approval_saver: Any, shape: str
) -> None:
    effects = SideEffects()
    graph = refund_graph(async_approval_saver, effects, use_async=True)
    await graph.ainvoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    out = await graph.ainvoke(Command(resume=SHAPES[shape][0]), as_user("t1", "ops"))
    _check(out["decision"], SHAPES[shape], "ops")
    assert len(effects.done) == 1


async def test_sync_nodes_decide_on_async_savers(async_approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(async_approval_saver, effects)
    await graph.ainvoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    out = await graph.ainvoke(Command(resume=True), as_user("t1", "ops"))
    assert out["decision"]["approved"] is True
    assert len(effects.done) == 1


def _ten_resumes(graph: Any, ten: tuple[str, ...], same: bool, extra: dict[str, Any]) -> list[Any]:
    barrier = threading.Barrier(10)
    outcomes: list[Any] = [None] * 10

    def one(i: int) -> None:
        user = "ops" if same else ten[i]
        value = True if same or i % 2 else {"decisions": [{"type": "reject", "message": "no"}]}
        config = as_user("t1", user)
        config["configurable"].update(extra)
        barrier.wait()
        try:
            outcomes[i] = graph.invoke(Command(resume=value), config)
        except (AlreadyDecided, ThreadBusy) as exc:
            outcomes[i] = exc

    workers = [threading.Thread(target=one, args=(i,)) for i in range(10)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return outcomes


def _one_decision_one_effect(saver: Any, effects: SideEffects, outcomes: list[Any]) -> None:
    # a resume that found the thread finished ran nothing and returns its final state;
    # one that reached the approval after the winner raises AlreadyDecided
    states = [o for o in outcomes if isinstance(o, dict)]
    losses = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    busy = [o for o in outcomes if isinstance(o, ThreadBusy)]
    assert len(states) + len(losses) + len(busy) == 10, outcomes
    assert len(effects.done) == 1
    [decision] = effects.done
    assert all(s["decision"] == decision for s in states)
    assert all(loss.by == decision["by"] and loss.decision["via"] == "resume" for loss in losses)
    trail = audit_log(saver, thread_id="t1")
    assert len([e for e in trail if e.outcome == "recorded"]) == 1
    assert len([e for e in trail if e.outcome == "already_decided"]) == len(losses)
    assert pending_approvals(saver) == []


TEN = tuple(f"user{i}" for i in range(10))


@pytest.mark.parametrize("same", [False, True], ids=["ten-deciders", "one-decider-ten-clicks"])
def test_ten_concurrent_resumes_make_one_decision_and_one_side_effect(
    approval_saver: Any, same: bool
) -> None:
    """The side effect follows the approval in its node: only the winner's run gets there."""
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects, approvers=("ops", *TEN))
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    outcomes = _ten_resumes(graph, TEN, same, {})
    _one_decision_one_effect(approval_saver, effects, outcomes)


@pytest.mark.parametrize("strategy", ["enqueue", "reject"])
def test_a_later_node_runs_once_when_runs_of_the_thread_are_serialized(
    leased_saver: Any, strategy: str
) -> None:
    """A node after the approving one runs in every run that finds it pending, so
    concurrent runs of one thread are serialized the way Agent Server does it:
    our savers' multitask strategies."""
    effects = SideEffects()
    graph = refund_graph(leased_saver, effects, approvers=("ops", *TEN), effect_in="pay")
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    outcomes = _ten_resumes(graph, TEN, False, {MULTITASK_KEY: strategy})
    _one_decision_one_effect(leased_saver, effects, outcomes)


def test_a_resume_naming_nobody_is_refused_audited_and_the_approval_waits(
    approval_saver: Any,
) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    with pytest.raises(NotAuthorized, match="names no decider") as refused:
        graph.invoke(Command(resume=True), {"configurable": {"thread_id": "t1"}})
    assert refused.value.approvers == ["ops"]
    [entry] = [e for e in audit_log(approval_saver, thread_id="t1") if e.action == "approve"]
    assert (entry.actor, entry.outcome) == ("anonymous", "not_authorized")
    assert effects.done == []
    [waiting] = pending_approvals(approval_saver)
    assert waiting.thread_id == "t1"
    # the refused value is not kept as the answer: the next resume is read
    out = graph.invoke(Command(resume=False), as_user("t1", "ops"))
    assert (out["decision"]["approved"], out["decision"]["by"]) == (False, "ops")


def test_an_unreadable_resume_is_refused_with_the_accepted_shapes(approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    with pytest.raises(ResumeNotUnderstood) as refused:
        graph.invoke(Command(resume={"ok": "yes"}), as_user("t1", "ops"))
    message = str(refused.value)
    assert "HITLResponse" in message and "HumanResponse" in message and "True / False" in message
    assert refused.value.approval_id is not None and refused.value.thread_id == "t1"
    outcomes = [e.outcome for e in audit_log(approval_saver, thread_id="t1")]
    assert "not_understood" in outcomes
    assert len(pending_approvals(approval_saver)) == 1
    assert graph.invoke(Command(resume="approve"), as_user("t1", "ops"))["decision"]["approved"]
    assert len(effects.done) == 1


def test_a_decision_the_request_does_not_allow_is_refused(approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects, allowed=["approve", "reject"])
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    with pytest.raises(DecisionNotAllowed, match="'edit'"):
        graph.invoke(Command(resume=SHAPES["hitl-edit"][0]), as_user("t1", "ops"))
    assert "not_allowed" in [e.outcome for e in audit_log(approval_saver, thread_id="t1")]
    assert effects.done == [] and len(pending_approvals(approval_saver)) == 1


@pytest.mark.parametrize("form", ["object", "dict"])
def test_agent_servers_user_decides_with_its_permissions_as_roles(
    approval_saver: Any, form: str
) -> None:
    class User:
        identity = "carol"
        display_name = "Carol"
        permissions = ("finance",)
        is_authenticated = True

    user: Any = User() if form == "object" else {"identity": "carol", "permissions": ["finance"]}
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects, approvers=("finance",))
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    out = graph.invoke(Command(resume=True), as_server_user("t1", user))
    assert (out["decision"]["by"], out["decision"]["roles"]) == ("carol", ["finance"])


def test_a_decider_outside_the_approvers_is_refused(approval_saver: Any) -> None:
    graph = refund_graph(approval_saver, SideEffects())
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    with pytest.raises(NotAuthorized, match="'mallory'"):
        graph.invoke(Command(resume=True), as_user("t1", "mallory"))
    assert len(pending_approvals(approval_saver)) == 1


def test_a_resume_after_a_recorded_decision_loses(approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    approve(approval_saver, {"configurable": {"thread_id": "t1"}}, by="ops", resume=False)
    with pytest.raises(AlreadyDecided) as lost:
        graph.invoke(Command(resume=False), as_user("t1", "ops"))
    assert lost.value.approved is True
    assert effects.done == []


def test_a_forged_decision_record_is_refused(approval_saver: Any) -> None:
    graph = refund_graph(approval_saver, SideEffects())
    first = graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    approval_id = first["__interrupt__"][0].id
    forged = {
        "type": "decision",
        "decision_id": "f" * 32,
        "approval_id": approval_id,
        "approved": True,
        "by": "ops",
        "at": "2026-11-29T09:00:00+00:00",
    }
    with pytest.raises(NotAuthorized, match="never recorded"):
        graph.invoke(Command(resume={approval_id: forged}), {"configurable": {"thread_id": "t1"}})


async def test_a_sync_request_in_an_async_node_on_an_async_saver_says_to_await(
    async_approval_saver: Any,
) -> None:
    """It cannot wait for the saver on the saver's own loop: the error names the async twin;
    approve() still works there (its record needs no wait)."""
    from langgraph.graph import END, START, StateGraph

    from langgraph_durable.interrupts import aapprove, request_approval
    from langgraph_durable.interrupts._resume import NeedsAsync

    async def review(state: dict[str, Any]) -> dict[str, Any]:
        d = request_approval({"action": "refund"}, approvers="ops")
        return {"amount": 1 if d.approved else 0}

    builder = StateGraph(dict)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    graph = builder.compile(checkpointer=async_approval_saver)
    await graph.ainvoke({"amount": 5}, {"configurable": {"thread_id": "t1"}})
    if isinstance(async_approval_saver, InMemorySaver):
        out = await graph.ainvoke(Command(resume=True), as_user("t1", "ops"))
        assert out["amount"] == 1  # in-process decisions need no wait
        return
    with pytest.raises(NeedsAsync, match="await arequest_approval"):
        await graph.ainvoke(Command(resume=True), as_user("t1", "ops"))
    out = await aapprove(graph, {"configurable": {"thread_id": "t1"}}, by="ops")
    assert out["amount"] == 1
