"""Approvals are spans: request, decide (refusals as events), timeout, escalate, resume.

Each later span links to the request's span, whose ``traceparent`` the wait
index stores with the wait.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.checkpointers import WAIT_KEY
from langgraph_durable.interrupts import (
    ApprovalSweeper,
    NotAuthorized,
    aapprove,
    approve,
)
from tests import _approval_savers
from tests._approval_graphs import FakeClock, cfg, review_graph, two_level_escalation
from tests._otel_support import Telemetry
from tests._parts import part_of

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def _linked_to(span: Any, target: Any) -> bool:
    return any(
        link.context.trace_id == target.context.trace_id
        and link.context.span_id == target.context.span_id
        for link in span.links
    )


def _stored_traceparent(saver: Any, thread_id: str) -> str | None:
    from langgraph_durable.interrupts import pending_approvals

    (pending,) = pending_approvals(saver)
    assert pending.thread_id == thread_id
    if not hasattr(saver, "list_waits"):
        return None
    (entry,) = part_of(saver, "waits").list_waits(thread_id=thread_id)
    return entry.value[WAIT_KEY]["traceparent"]  # type: ignore[no-any-return]


def test_request_and_decision_are_linked_spans(otel: Telemetry, approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False)
    graph.invoke({"amount": 5}, cfg("t1"))
    (request,) = otel.spans("approval.request")
    assert request.attributes["langgraph.thread_id"] == "t1"
    assert request.attributes["langgraph_durable.approval.kind"] == "approval"
    assert request.attributes["langgraph_durable.approval.level"] == 0
    assert list(request.attributes["langgraph_durable.approval.approvers"]) == ["ops"]
    assert request.status.is_ok  # the interrupt pausing the run is no error
    stored = _stored_traceparent(approval_saver, "t1")
    if stored is not None:  # our savers' wait index keeps the request's span context
        ctx = request.context
        assert stored == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"

    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t1"), by="mallory")
    approve(graph, cfg("t1"), by="olga", roles=["ops"], comment="fine")
    refused, decided = otel.spans("approval.decide")
    (event,) = [e for e in refused.events if e.name != "exception"]
    assert event.name == "approval.refused"
    assert event.attributes["langgraph_durable.decider"] == "mallory"
    assert event.attributes["langgraph_durable.outcome"] == "not_authorized"
    assert not refused.status.is_ok
    assert decided.attributes["langgraph_durable.decision"] == "approve"
    assert decided.attributes["langgraph_durable.decider"] == "olga"
    assert decided.attributes["langgraph_durable.approval.level"] == 0
    assert _linked_to(decided, request) and _linked_to(refused, request)
    # the resumed run happens inside the decision: the node gets its answer there
    (answer,) = otel.spans("approval.answer")
    assert answer.parent is not None and answer.parent.span_id == decided.context.span_id
    assert answer.attributes["langgraph_durable.answer.type"] == "decision"
    assert stored is None or any(  # our savers' calls of the resumed run are its children too
        s.parent and s.parent.span_id == decided.context.span_id
        for s in otel.spans("checkpoint.put")
    )
    points = otel.collect()
    (decisions,) = points["langgraph_durable.approval.decisions"]
    assert (decisions.attributes["outcome"], decisions.value) == ("approve", 1)
    (waited,) = points["langgraph_durable.approval.decision_time"]
    assert waited.count == 1


def test_timeout_and_escalation_are_spans(otel: Telemetry, approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, on_timeout=two_level_escalation())
    graph.invoke({"amount": 1}, cfg("t1", clock))
    (request,) = otel.spans("approval.request")
    sweeper = ApprovalSweeper(graph, clock=clock)
    clock.advance(timedelta(minutes=15))
    assert sweeper.run_once() == 1
    (escalate,) = otel.spans("approval.escalate")
    assert escalate.attributes["langgraph_durable.approval.level"] == 1
    assert escalate.attributes["langgraph_durable.rule"] == "on_timeout=escalate"
    assert _linked_to(escalate, request)
    (first_pass,) = otel.spans("sweeper.pass")
    assert first_pass.attributes["langgraph_durable.resolved"] == 1
    assert escalate.parent.span_id == first_pass.context.span_id
    # the resumed node asks again, at level 1: a new request, in the sweeper's trace
    second = [s for s in otel.spans("approval.request") if s is not request]
    assert [s.attributes["langgraph_durable.approval.level"] for s in second] == [1]
    for _ in range(2):  # to the director, then the last rule: reject
        clock.advance(timedelta(hours=1))
        assert sweeper.run_once() == 1
    (timeout,) = otel.spans("approval.timeout")
    assert timeout.attributes["langgraph_durable.decision"] == "reject"
    assert timeout.attributes["langgraph_durable.decider"] == "system"
    points = otel.collect()
    assert sum(p.value for p in points["langgraph_durable.approval.escalations"]) == 2
    assert sum(p.value for p in points["langgraph_durable.approval.timeouts"]) == 1


async def test_async_request_and_decision_are_linked(
    otel: Telemetry, async_approval_saver: Any
) -> None:
    graph = review_graph(async_approval_saver)
    await graph.ainvoke({"amount": 5}, cfg("t1"))
    (request,) = otel.spans("approval.request")
    await aapprove(graph, cfg("t1"), by="olga")
    (decided,) = otel.spans("approval.decide")
    assert decided.attributes["langgraph_durable.decider"] == "olga"
    assert _linked_to(decided, request)
    (answer,) = otel.spans("approval.answer")
    assert answer.context.trace_id == decided.context.trace_id


def test_batch_decisions_are_linked_to_the_batch_request(
    otel: Telemetry, approval_saver: Any
) -> None:
    from langgraph_durable.interrupts import decide
    from tests._approval_graphs import order_graph, orders

    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(3)}, cfg("b1"))
    (request,) = otel.spans("approval.request")
    assert request.attributes["langgraph_durable.approval.kind"] == "batch"
    decide(graph, cfg("b1"), {"o1": True, "o2": True, "o3": False}, by="alice")
    decided = otel.spans("approval.decide")
    assert decided and all(_linked_to(s, request) for s in decided)
    assert decided[0].attributes["langgraph_durable.decider"] == "alice"
