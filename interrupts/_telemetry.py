"""The helpers' spans and metrics: approvals, the sweeper, recovery, compensation, activities.

Span names and metric names are part of the contract (docs/guides/observability.md).
A flow (a generator of operations, see :mod:`._driver`) is traced by
:func:`traced_flow`: its span is current while the flow runs, so the
operations it yields (a resumed run's saver calls) are its children, and the
flow itself adds attributes, events and links to it through :func:`current`.

One trace across a pause: the node that asks stores its span's
``traceparent`` in the wait marker (``traceparent`` beside ``deadline``);
whoever decides, times out, escalates or resumes that wait later, in any
process, links its span to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from langgraph_durable.checkpointers import WAIT_KEY, wait_dict
from langgraph_durable.checkpointers import telemetry as _otel
from langgraph_durable.checkpointers.telemetry import (
    IDLE,
    add_link,
    current_traceparent,
    metrics_active,
    span,
    thread_attributes,
    tracing_active,
)
from langgraph_durable.interrupts._driver import Flow

T = TypeVar("T")

__all__ = [
    "count",
    "current",
    "decision_time",
    "link_request",
    "stamp_request",
    "traced",
    "traced_flow",
]


def current() -> Any:
    """The recording span of the caller, or an idle stand-in."""
    if not tracing_active():
        return IDLE
    found = _otel.current_span()
    return found if found.is_recording() else IDLE


def traced_flow(name: str, flow: Flow[T], attributes: Mapping[str, Any] | None = None) -> Flow[T]:
    """``flow`` inside a span named ``name`` (the flow itself when nothing records).

    The parent is the context of the caller of this function, captured now: a
    flow driven later in a worker thread stays in its caller's trace.
    """
    if not tracing_active():
        return flow
    parent = _otel.current_context()
    return _in_span(name, flow, dict(attributes or {}), parent)


def _in_span(name: str, flow: Flow[T], attributes: dict[str, Any], parent: Any) -> Flow[T]:
    token = _otel.attach(parent)
    try:
        with span(name, attributes):
            return (yield from flow)
    finally:
        _otel.detach(token)


@contextmanager
def traced(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Any]:
    """A span named ``name`` around a block (an idle stand-in when nothing records)."""
    with span(name, attributes) as current_span:
        yield current_span


def _marker(value: Any) -> dict[str, Any] | None:
    found = wait_dict(value)
    marker = None if found is None else found.get(WAIT_KEY)
    return marker if isinstance(marker, dict) else None


def stamp_request(value: Any) -> None:
    """Store the current span's ``traceparent`` in the wait marker of ``value``."""
    marker = _marker(value)
    traceparent = current_traceparent()
    if marker is not None and traceparent is not None:
        marker["traceparent"] = traceparent


def link_request(target: Any, value: Any) -> None:
    """Link span ``target`` to the span that asked the wait in ``value``, if it was traced."""
    marker = _marker(value)
    if marker is not None and marker.get("traceparent"):
        add_link(target, marker["traceparent"], **{"langgraph_durable.link": "approval.request"})


def approval_attributes(
    thread_id: Any, approval_id: Any, value: Any = None, **more: Any
) -> dict[str, Any]:
    """The attributes every approval span carries."""
    attrs = thread_attributes(thread_id)
    if approval_id is not None:
        attrs["langgraph_durable.approval.id"] = str(approval_id)
    marker = _marker(value)
    if marker is not None:
        attrs["langgraph_durable.approval.kind"] = str(marker.get("kind"))
        attrs["langgraph_durable.approval.level"] = int(marker.get("escalation_level") or 0)
    attrs.update({f"langgraph_durable.{k}": v for k, v in more.items() if v is not None})
    return attrs


class _Instruments:
    """The helpers' counters and histograms, made on first use."""

    made: dict[str, Any] = {}  # noqa: RUF012 - one registry per process, on purpose

    COUNTERS: Mapping[str, str] = {
        "langgraph_durable.approval.decisions": "Approval decisions recorded, by outcome",
        "langgraph_durable.approval.timeouts": "Approvals decided by their timeout rule",
        "langgraph_durable.approval.escalations": "Approvals escalated at their deadline",
        "langgraph_durable.recoveries": "Orphaned runs resumed by a recovery worker",
        "langgraph_durable.compensation.failures": "Undo attempts that raised",
    }

    @classmethod
    def get(cls, name: str) -> Any:
        made = cls.made.get(name)
        if made is None:
            meter = _otel.meter()
            if name == "langgraph_durable.approval.decision_time":
                made = meter.create_histogram(
                    name, unit="s", description="Time from an approval's request to its decision"
                )
            else:
                made = meter.create_counter(name, unit="1", description=cls.COUNTERS[name])
            cls.made[name] = made
        return made


def count(name: str, amount: int = 1, **attributes: Any) -> None:
    """Add ``amount`` to counter ``name`` (nothing when no SDK records metrics)."""
    if metrics_active():
        _Instruments.get(name).add(amount, {k: v for k, v in attributes.items() if v is not None})


def decision_time(requested_at: Any, decided_at: datetime, **attributes: Any) -> None:
    """Record the time from ``requested_at`` (ISO text) to ``decided_at``."""
    if not metrics_active() or not isinstance(requested_at, str):
        return
    try:
        seconds = (decided_at - datetime.fromisoformat(requested_at)).total_seconds()
    except (TypeError, ValueError):
        return
    _Instruments.get("langgraph_durable.approval.decision_time").record(
        max(0.0, seconds), attributes
    )


def traced_ask(ask: Any, value: Any, audit: dict[str, Any]) -> Any:
    """``ask(value, **audit)`` (the node's interrupt) as an ``approval.request`` span.

    The span's ``traceparent`` goes into the wait marker before the interrupt
    is raised, so the wait index stores it. When the node is re-run with its
    answer instead, the same span is the ``approval.answer`` of the resumed run.
    """
    if not tracing_active():
        return ask(value, **audit)
    from langgraph.errors import GraphInterrupt

    from langgraph_durable.interrupts._pregel import current_task

    task = current_task()
    deadline = audit.get("deadline")
    attrs = approval_attributes(
        None if task is None else task.thread_id,
        None,
        value,
        **{
            "approval.approvers": [str(a) for a in audit.get("approvers") or ()],
            "approval.deadline": None if deadline is None else deadline.isoformat(),
        },
    )
    with span("approval.request", attrs, quiet=(GraphInterrupt,)) as asking:
        stamp_request(value)
        answer = ask(value, **audit)
        asking.update_name("approval.answer")
        if isinstance(answer, dict):
            for key in ("action", "type"):
                if isinstance(answer.get(key), str):
                    asking.set_attribute(f"langgraph_durable.answer.{key}", answer[key])
        return answer


def refused_event(entry: Mapping[str, Any]) -> None:
    """A refused decision attempt (its audit entry) as an event of the current span."""
    target = current()
    if not target.is_recording():
        return
    attrs = {
        "langgraph_durable.decider": entry.get("actor"),
        "langgraph_durable.decision": entry.get("action"),
        "langgraph_durable.outcome": entry.get("outcome"),
        "langgraph_durable.reason": entry.get("reason"),
    }
    target.add_event("approval.refused", {k: str(v) for k, v in attrs.items() if v is not None})


def decided(intr: Any, record: Mapping[str, Any], action: str, requested_at: Any) -> None:
    """A recorded decision: the current span's attributes, and the decision metrics."""
    target = current()
    if target.is_recording():
        target.set_attributes(
            {
                "langgraph_durable.approval.id": str(intr.id),
                "langgraph_durable.decision": action,
                "langgraph_durable.decider": str(record.get("by", "")),
                "langgraph_durable.approval.level": int(record.get("level") or 0),
                "langgraph_durable.deferred": bool(record.get("deferred")),
            }
        )
    count("langgraph_durable.approval.decisions", outcome=action)
    at = record.get("at")
    if isinstance(at, str):
        decision_time(requested_at, datetime.fromisoformat(at), outcome=action)


def swept_timeout(entry: Any, record: Mapping[str, Any]) -> None:
    """The sweeper recorded ``record`` at ``entry``'s deadline: name its span and count it."""
    escalated = record.get("type") == "escalate"
    target = current()
    if target.is_recording():
        target.update_name("approval.escalate" if escalated else "approval.timeout")
        target.set_attributes(
            {
                "langgraph_durable.decider": str(record.get("by", "")),
                "langgraph_durable.rule": str(record.get("rule", "")),
                "langgraph_durable.approval.level": int(record.get("level") or 0),
            }
        )
        if not escalated:
            outcome = "approve" if record.get("approved") else "reject"
            target.set_attribute("langgraph_durable.decision", outcome)
    if escalated:
        count("langgraph_durable.approval.escalations")
    else:
        count("langgraph_durable.approval.timeouts")
        count("langgraph_durable.approval.decisions", outcome="timeout")


def recovery_attributes(claimed: Any) -> dict[str, Any]:
    """The attributes of a ``recovery.resume`` span: the thread and its recovery count."""
    attrs = thread_attributes(claimed.thread_id)
    attrs["langgraph_durable.recoveries"] = int(claimed.recoveries)
    return attrs


def undo_attributes(plan: Any) -> dict[str, Any]:
    """The attributes of a ``compensation.undo`` span (``plan``: the compensator's)."""
    _saga, step, ctx, _fn, key, _pass_key = plan
    attrs = thread_attributes(ctx.thread_id)
    attrs["langgraph_durable.undo"] = str(step.get("undo"))
    attrs["langgraph_durable.step"] = str(step.get("id"))
    attrs["langgraph_durable.idempotency_key"] = str(key)
    return attrs


def undo_failed(step: Mapping[str, Any], error: BaseException, attempt: int) -> None:
    """One undo attempt raised: an event on the undo's span, one more failure counted."""
    target = current()
    if target.is_recording():
        target.add_event(
            "compensation.attempt_failed",
            {"langgraph_durable.attempt": attempt, "exception.type": type(error).__name__},
        )
    count("langgraph_durable.compensation.failures", undo=str(step.get("undo")))


def activity_attributes(name: str, key: Any) -> dict[str, Any]:
    """The attributes of an ``activity.call`` span: its name and idempotency key."""
    attrs: dict[str, Any] = {"langgraph_durable.activity.name": str(name)}
    if key is not None:
        attrs["langgraph_durable.idempotency_key"] = str(key)
    return attrs
