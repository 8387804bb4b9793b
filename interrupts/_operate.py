"""Operator actions on a waiting approval: extend, reassign, remind, cancel.

Each is authorized by the same policy as a decision (the operator must be
allowed to decide the approval) and audited, refusals included.

* **extend** moves the deadline (later or earlier) and **reassign** names new
  approvers. Both are recorded once (compare-and-set under the approval's key,
  like a decision: a decision made first wins, and the other way round), then
  the run resumes and the node asks again at the same escalation level with
  the new deadline or approvers. That ask is a new interrupt, which the saver
  indexes in the same atomic unit as its write, so the wait index follows
  (deadline, approvers) exactly once. With ``resume=False`` the next sweep
  resumes the run.
* **remind** records a reminder and hands it to the notifier
  (:func:`~langgraph_durable.interrupts.set_notifier`); nothing else changes.
* **cancel** is recorded once like a decision; the node gets
  ``Decision(type="cancel", approved=False)`` (a rejection), and in a graph
  wired with :func:`~langgraph_durable.interrupts.add_compensation` the run's
  committed steps are undone.

These act on approvals (``request_approval``); on a batch only ``remind`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.types import Command, Interrupt

from langgraph_durable.checkpointers import ThreadBusy, audit_entry, extract_wait
from langgraph_durable.interrupts._approve import (
    decision_of,
    log_left_to_sweep,
    resume_config,
    resume_value,
)
from langgraph_durable.interrupts._authz import NotAuthorized, check_decider
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decider_args import DeciderArgs
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    decided_entry,
    refusal_entry,
    refusal_reason,
)
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import AlreadyDecided, InvalidInput
from langgraph_durable.interrupts._inputs import check_names, check_timeout
from langgraph_durable.interrupts._notify import ApprovalEvent, notify
from langgraph_durable.interrupts._pending import find_pending_flow, thread_of
from langgraph_durable.interrupts._records import new_record, section, won
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    GetState,
    Invoke,
    RecordDecision,
    ThreadBusyNow,
)

KINDS = ("approval", "batch")


def _found_flow(
    config: dict[str, Any], kinds: Sequence[str], decider: DeciderArgs, action: str
) -> Flow[tuple[str, Interrupt]]:
    """The pending interrupt meant, once the operator is authorized on it (else audited)."""
    thread_id = thread_of(config)
    state = yield from GetState(config=config)
    kind = next(
        (k for k in kinds for i in getattr(state, "interrupts", ()) if _kind_of(i) == k),
        kinds[0],
    )
    by, clock = decider.by, decider.clock
    intr = yield from find_pending_flow(
        config, thread_id, kind, decider.approval_id, by=by, action=action, clock=clock
    )
    try:
        check_decider(
            thread_id, intr, kind, by=by, roles=decider.roles, authorize=decider.authorize
        )
    except NotAuthorized as refused:
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=by,
            action=action,
            at=now_of(clock),
            fingerprint=section(intr.value).get("fingerprint"),
            outcome="not_authorized",
            reason=refusal_reason(refused),
        )
        yield from AppendAudit(entries=[entry])
        raise
    return thread_id, intr


def _kind_of(intr: Any) -> str | None:
    info = extract_wait(intr)
    return None if info is None else info.kind


def _record_flow(
    config: dict[str, Any],
    thread_id: str,
    intr: Interrupt,
    record: dict[str, Any],
    audit: dict[str, Any],
    clock: Clock | None,
    resume: bool,
) -> Flow[Any]:
    """CAS ``record`` under the approval's key with its entry, then resume (or defer).

    Like a decision, a change recorded on a thread that a live run holds is left to
    the next sweep (recorded as deferred, or kept when the resume is turned away):
    once recorded, the call returns it and never raises.
    """
    config_of_resume = resume_config(config, clock, intr.value)
    busy = resume and bool((yield from ThreadBusyNow(config=config_of_resume)))
    if not resume or busy:
        record["deferred"] = True
    stored = yield from RecordDecision(
        thread_id=thread_id, key=intr.id, decision=record, audit=audit
    )
    if not won(stored, record):
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=record["by"],
            action=audit["action"],
            at=datetime.fromisoformat(record["at"]),
            fingerprint=record.get("fingerprint"),
            outcome="already_decided",
            reason=already_reason(stored),
        )
        yield from AppendAudit(entries=[entry])
        raise AlreadyDecided(thread_id=thread_id, approval_id=intr.id, decision=stored)
    recorded = decision_of(record) if record["type"] == "decision" else record
    if not resume or busy:
        if busy:
            log_left_to_sweep(thread_id, intr.id, "a run holds the thread")
        return recorded
    command: Command[Any] = Command(resume={intr.id: resume_value(record, intr.value)})
    try:
        return (yield from Invoke(input=command, config=config_of_resume))
    except ThreadBusy as turned_away:
        log_left_to_sweep(thread_id, intr.id, str(turned_away))
        return recorded


def _new_deadline(
    current: datetime | None, now: datetime, delta: Any, until: datetime | None
) -> datetime:
    if (delta is None) == (until is None):
        raise InvalidInput(parameter="delta", reason="give exactly one of delta= or until=")
    if until is not None:
        if not isinstance(until, datetime) or until.tzinfo is None:
            raise InvalidInput(parameter="until", reason="must be a timezone-aware datetime")
        return until
    seconds = delta.total_seconds() if isinstance(delta, timedelta) else delta
    negative = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds < 0
    wait = check_timeout(-seconds if negative else delta, "delta") or timedelta(0)
    return (current or now) + (-wait if negative else wait)


def amend_flow(
    config: dict[str, Any],
    decider: DeciderArgs,
    *,
    action: str,
    resume: bool,
    delta: Any = None,
    until: datetime | None = None,
    to: Any = None,
) -> Flow[Any]:
    """Extend (``action="extend"``) or reassign (``"reassign"``) a waiting approval."""
    decider = decider.checked()
    now = now_of(decider.clock)
    asked = check_names(to, "to") if action == "reassign" else None
    if action == "reassign" and not asked:
        raise InvalidInput(parameter="to", reason="names nobody: reassign to someone")
    thread_id, intr = yield from _found_flow(config, ("approval",), decider, action)
    info = extract_wait(intr)
    fields: dict[str, Any] = {"operator_action": action, "comment": decider.comment}
    if action == "extend":
        deadline = _new_deadline(info.deadline if info else None, now, delta, until)
        fields["deadline"] = deadline.isoformat()
        was = info.deadline.isoformat() if info and info.deadline else "none"
        reason = f"deadline {was} -> {fields['deadline']}"
    else:
        fields["to"] = asked
        was_to = ", ".join(info.approvers) if info and info.approvers else "anyone"
        reason = f"approvers {was_to} -> {', '.join(asked or [])}"
    record = _api_record(intr, decider, now, type="amend", via="api", **fields)
    audit = decided_entry(thread_id, record, action=action, reason=reason)
    return (yield from _record_flow(config, thread_id, intr, record, audit, decider.clock, resume))


def cancel_flow(config: dict[str, Any], decider: DeciderArgs, *, resume: bool) -> Flow[Any]:
    """Cancel the run waiting at an approval: a rejection recorded once, then resumed."""
    decider = decider.checked()
    thread_id, intr = yield from _found_flow(config, ("approval",), decider, "cancel")
    record = _api_record(
        intr,
        decider,
        now_of(decider.clock),
        type="decision",
        approved=False,
        comment=decider.comment,
        action="cancel",
        via="api",
    )
    audit = decided_entry(thread_id, record, action="cancel", reason=decider.comment)
    return (yield from _record_flow(config, thread_id, intr, record, audit, decider.clock, resume))


def _api_record(
    intr: Interrupt, decider: DeciderArgs, at: datetime, **fields: Any
) -> dict[str, Any]:
    """A new record of ``decider``'s change to the approval ``intr``, with ``fields``."""
    info = extract_wait(intr)
    return new_record(
        approval_id=intr.id,
        by=decider.by,
        at=at,
        level=info.escalation_level if info else 0,
        fingerprint=section(intr.value).get("fingerprint"),
        roles=list(decider.roles),
        **fields,
    )


def remind_flow(config: dict[str, Any], decider: DeciderArgs) -> Flow[ApprovalEvent]:
    """Record a reminder of a waiting approval or batch, then hand it to the notifier."""
    decider = decider.checked()
    thread_id, intr = yield from _found_flow(config, KINDS, decider, "remind")
    by, comment = decider.by, decider.comment
    info = extract_wait(intr)
    sec = section(intr.value)
    now = now_of(decider.clock)
    event = ApprovalEvent(
        kind="reminder",
        thread_id=thread_id,
        approval_id=intr.id,
        by=by,
        at=now,
        approvers=info.approvers if info else (),
        deadline=info.deadline if info else None,
        request=sec.get("request", [i.get("item") for i in sec.get("items") or []]),
        comment=comment,
    )
    who = ", ".join(event.approvers) or "anyone"
    entry = audit_entry(
        at=now,
        thread_id=thread_id,
        approval_id=intr.id,
        actor=by,
        action="remind",
        fingerprint=sec.get("fingerprint"),
        outcome="recorded",
        reason=f"reminded {who}" + (f": {comment}" if comment else ""),
    )
    yield from AppendAudit(entries=[entry])
    notify(event)
    return event
