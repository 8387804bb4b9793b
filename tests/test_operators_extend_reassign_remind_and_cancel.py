"""Operator actions on a waiting approval, each authorized and audited: extend (the wait index
follows), reassign, remind (the notifier hook), cancel (a saga compensates)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    AlreadyDecided,
    ApprovalEvent,
    ApprovalSweeper,
    InvalidInput,
    NotAuthorized,
    add_compensation,
    approve,
    audit_log,
    cancel,
    extend,
    pending_approvals,
    reassign,
    remind,
    request_approval,
    set_notifier,
)
from tests import _approval_savers
from tests import _saga_graphs as g
from tests._approval_graphs import T0, FakeClock, review_graph
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

approval_saver = _approval_savers.approval_saver


def cfg(thread_id: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _started(saver: Any, clock: FakeClock) -> Any:
    graph = review_graph(saver, timeout=timedelta(minutes=15), open_to_all=False)
    graph.invoke({"amount": 5}, {"configurable": {"thread_id": "t1", CLOCK_CONFIG_KEY: clock}})
    return graph


def _entries(saver: Any, action: str) -> list[Any]:
    return [e for e in audit_log(saver, thread_id="t1") if e.action == action]


def test_extend_moves_the_deadline_in_the_wait_index(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = _started(approval_saver, clock)
    extend(
        graph, cfg(), by="ops", delta=timedelta(hours=2), comment="customer on leave", clock=clock
    )
    [waiting] = pending_approvals(approval_saver)
    assert waiting.deadline == T0 + timedelta(minutes=15, hours=2)
    [entry] = _entries(approval_saver, "extend")
    assert (entry.actor, entry.outcome) == ("ops", "recorded")
    assert entry.reason == (
        f"deadline {(T0 + timedelta(minutes=15)).isoformat()} -> {waiting.deadline.isoformat()}"
    )
    # the old deadline passes: nothing happens; the new one passes: the timeout applies
    sweeper = ApprovalSweeper(graph, clock=clock)
    clock.advance(timedelta(minutes=30))
    sweeper.run_once()
    assert len(pending_approvals(approval_saver)) == 1
    clock.advance(timedelta(hours=2))
    sweeper.run_once()
    assert pending_approvals(approval_saver) == []
    assert graph.get_state(cfg()).values["timed_out"] is True


def test_extend_until_shortens_and_a_saver_alone_records_it_for_the_sweep(
    approval_saver: Any,
) -> None:
    clock = FakeClock()
    graph = _started(approval_saver, clock)
    until = T0 + timedelta(minutes=5)
    extend(approval_saver, cfg(), by="ops", until=until, clock=clock, resume=False)
    with pytest.raises(AlreadyDecided, match="deadline moved"):
        approve(approval_saver, cfg(), by="ops", resume=False)
    ApprovalSweeper(graph, clock=clock).run_once()  # resumes the deferred change at once
    [waiting] = pending_approvals(approval_saver)
    assert waiting.deadline == until
    assert approve(graph, cfg(), by="ops")["approved"] is True


def test_extend_needs_one_of_delta_or_until(approval_saver: Any) -> None:
    graph = _started(approval_saver, FakeClock())
    with pytest.raises(InvalidInput, match="exactly one"):
        extend(graph, cfg(), by="ops")
    with pytest.raises(InvalidInput, match="delta"):
        extend(graph, cfg(), by="ops", delta="2h")  # type: ignore[arg-type]
    assert len(pending_approvals(approval_saver)) == 1


def test_reassign_routes_the_approval_to_new_approvers(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = _started(approval_saver, clock)
    reassign(graph, cfg(), by="ops", to=["finance"], clock=clock)
    [waiting] = pending_approvals(approval_saver, approver="finance")
    assert waiting.approvers == ["finance"] and waiting.deadline == T0 + timedelta(minutes=15)
    assert pending_approvals(approval_saver, approver="ops") == []
    with pytest.raises(NotAuthorized):
        approve(graph, cfg(), by="ops")
    assert approve(graph, cfg(), by="finance")["by"] == "finance"
    [entry] = _entries(approval_saver, "reassign")
    assert entry.reason == "approvers ops -> finance"


def test_operator_actions_are_authorized_and_refusals_audited(approval_saver: Any) -> None:
    graph = _started(approval_saver, FakeClock())
    for call, kwargs in [
        (extend, {"delta": 60}),
        (reassign, {"to": "mallory"}),
        (cancel, {}),
        (remind, {}),
    ]:
        with pytest.raises(NotAuthorized):
            call(graph, cfg(), by="mallory", **kwargs)
    refused = [e.action for e in audit_log(approval_saver, thread_id="t1")]
    assert [a for a in refused if a != "request"] == ["extend", "reassign", "cancel", "remind"]
    assert len(pending_approvals(approval_saver)) == 1


def test_remind_records_and_calls_the_notifier(approval_saver: Any) -> None:
    graph = _started(approval_saver, FakeClock())
    heard: list[ApprovalEvent] = []
    previous = set_notifier(heard.append)
    try:
        event = remind(approval_saver, cfg(), by="ops", comment="please look")
    finally:
        set_notifier(previous)
    assert heard == [event]
    assert (event.kind, event.approvers, event.request) == (
        "reminder",
        ("ops",),
        {"action": "refund", "amount": 5},
    )
    [entry] = _entries(approval_saver, "remind")
    assert entry.reason == "reminded ops: please look"
    assert len(pending_approvals(approval_saver)) == 1
    assert approve(graph, cfg(), by="ops")["approved"] is True


def test_cancel_is_a_rejection_recorded_once(approval_saver: Any) -> None:
    graph = _started(approval_saver, FakeClock())
    out = cancel(graph, cfg(), by="ops", comment="order withdrawn")
    assert (out["approved"], out["by"], out["comment"]) == (False, "ops", "order withdrawn")
    with pytest.raises(AlreadyDecided):
        cancel(graph, cfg(), by="ops")
    assert [e.outcome for e in _entries(approval_saver, "cancel")] == [
        "recorded",
        "already_decided",
    ]


def test_cancelling_a_saga_runs_its_compensations(saga_saver: Any) -> None:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()

    def review(state: g.OrderState) -> dict[str, Any]:
        request_approval({"refund": state["charge_id"]})
        return {}

    graph = add_compensation(g.reviewed_order(review)).compile(checkpointer=saga_saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "order-c"}}
    graph.invoke({"order_id": "o1", "amount": 3}, config)
    cancel(graph, config, by="ops", comment="fraud")
    final = graph.get_state(config).values
    assert "ship" not in g.LEDGER.call_names()
    assert g.LEDGER.call_names()[-2:] == ["refund", "release"]
    assert final["saga"]["status"] == "compensated"
    assert final["saga"]["reason"] == "approval cancelled by ops: fraud"
