"""The decision flow behind ``approve`` / ``reject``: compare-and-set the decision, then resume.

The order is the exactly-once guarantee: the decision is stored (one winner
per approval) *before* the run resumes. A process that dies between the two
leaves the decision stored; :class:`~langgraph_durable.interrupts.ApprovalSweeper` finds it one
lease later and finishes the resume.

The public calls that drive this flow are in :mod:`._decision_calls_async` (and its
generated sync module).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt

from langgraph_durable.checkpointers import ThreadBusy, extract_wait
from langgraph_durable.interrupts._authz import (
    REQUESTED_BY_KEY,
    Authorize,
    NotAuthorized,
    check_decider,
)
from langgraph_durable.interrupts._clock import Clock, now_of, with_clock
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    api_reason,
    decided_entry,
    refusal_entry,
    refusal_reason,
)
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    DecisionNotAllowed,
)
from langgraph_durable.interrupts._inputs import decider_args
from langgraph_durable.interrupts._models import Decision
from langgraph_durable.interrupts._pending import find_pending_flow, thread_of
from langgraph_durable.interrupts._records import decision_fields, new_record, section, won
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    Invoke,
    RecordDecision,
    ThreadBusyNow,
)
from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED
from langgraph_durable.interrupts._telemetry import (
    approval_attributes,
    current,
    decided,
    link_request,
    refused_event,
    traced_flow,
)
from langgraph_durable.interrupts._types import CompiledGraph, GraphOrSaver, saver_of

log = logging.getLogger("langgraph_durable.interrupts.approvals")


def resume_value(record: dict[str, Any], value: Any) -> dict[str, Any]:
    """What the resumed node receives: the record plus the payload that was shown."""
    return {**record, "request": section(value).get("request")}


def resume_config(config: dict[str, Any], clock: Clock | None, value: Any) -> dict[str, Any]:
    """The config of a resumed run: the clock, and who started the run.

    A resumed run's config comes from whoever resumes it (an approver, the
    sweeper), not from the requester: ``requested_by`` is carried over from the
    request, so a re-ask (escalation, stale payload) still knows the requester
    (separation of duties, the audit trail).
    """
    out = with_clock(config, clock)
    who = section(value).get(REQUESTED_BY_KEY)
    if who is not None and REQUESTED_BY_KEY not in out["configurable"]:
        out["configurable"][REQUESTED_BY_KEY] = who
    return out


def decide_approval_flow(config: dict[str, Any], **kwargs: Any) -> Flow[Any]:
    """:func:`_decide_approval_flow` as an ``approval.decide`` span (see :mod:`._telemetry`)."""
    thread = (
        (config.get("configurable") or {}).get("thread_id") if isinstance(config, dict) else None
    )
    attrs = approval_attributes(thread, kwargs.get("approval_id"))
    return traced_flow("approval.decide", _decide_approval_flow(config, **kwargs), attrs)


def _decide_approval_flow(
    config: dict[str, Any],
    *,
    approved: bool,
    by: str,
    comment: str | None,
    approval_id: str | None,
    roles: Sequence[str],
    clock: Clock | None,
    authorize: Authorize | None = None,
    resume: bool = True,
    answer: dict[str, Any] | None = None,
) -> Flow[Any]:
    """Find the pending approval, check the decider, CAS the decision, resume the run.

    With ``resume=False`` the decision is recorded as deferred and returned as a
    :class:`~langgraph_durable.interrupts.Decision`; the next sweep (``ApprovalSweeper``, the
    ``worker`` or ``sweep`` command) resumes the run with it.

    ``answer``: an edit or respond decision (``{"type": "edit", "args": ...}``,
    ``{"type": "respond", "message": ...}``); ``approved`` then follows from it.

    Every attempt is audited: a refusal (not authorized, not allowed, already
    decided) on its own, a decision with the decision itself. Arguments that
    cannot be stored are refused first, before anything is read or recorded.
    """
    by, comment, roles, approval_id = decider_args(
        by=by, comment=comment, roles=roles, approval_id=approval_id, id_parameter="approval_id"
    )
    thread_id = thread_of(config)
    answer = {**(answer or {"type": "approve" if approved else "reject"}), "comment": comment}
    if answer["type"] == "reject" and answer.get("args") is not None:
        answer["message"] = None
    action = answer["type"]
    intr = yield from find_pending_flow(
        config, thread_id, "approval", approval_id, by=by, action=action, clock=clock
    )
    link_request(current(), intr.value)
    yield from _check_decider_flow(
        thread_id, intr, by=by, action=action, roles=roles, authorize=authorize, clock=clock
    )
    config_of_resume = resume_config(config, clock, intr.value)
    # a run holds the thread and the resume would be turned away: record the
    # decision as deferred (the next sweep resumes the run at once) and return it
    busy = resume and (yield from ThreadBusyNow(config=config_of_resume))
    record, audit = _api_decision(
        thread_id, intr, answer, by=by, roles=roles, at=now_of(clock), deferred=not resume or busy
    )
    stored = yield from RecordDecision(
        thread_id=thread_id, key=intr.id, decision=record, audit=audit
    )
    if not won(stored, record):
        yield from lost_race_flow(thread_id, intr.id, stored, by=by, action=action, record=record)
    decided(intr, record, action, section(intr.value).get("requested_at"))
    if busy:
        log_left_to_sweep(thread_id, intr.id, "a run holds the thread")
    if not resume or busy:
        return decision_of(record)
    command: Command[Any] = Command(resume={intr.id: resume_value(record, intr.value)})
    try:
        return (yield from Invoke(input=command, config=config_of_resume))
    except ThreadBusy as turned_away:
        # a run took the thread after the check: the decision stands, never raise
        log_left_to_sweep(thread_id, intr.id, str(turned_away))
        return decision_of(record)


def _api_decision(
    thread_id: str,
    intr: Interrupt,
    answer: dict[str, Any],
    *,
    by: str,
    roles: Sequence[str],
    at: datetime,
    deferred: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record of a decision made through the API, and its audit entry."""
    sec = section(intr.value)
    info = extract_wait(intr)
    record = new_record(
        type="decision",
        approval_id=intr.id,
        by=by,
        at=at,
        level=info.escalation_level if info else 0,
        fingerprint=sec.get("fingerprint"),
        roles=list(roles),
        via="api",
        **decision_fields(answer, sec.get("request")),
    )
    if deferred:
        record["deferred"] = True
    audit = decided_entry(thread_id, record, action=answer["type"], reason=api_reason(record))
    if record.get("edited_fingerprint"):
        audit["fingerprint"] = record["edited_fingerprint"]
    return record, audit


def _check_decider_flow(
    thread_id: str,
    intr: Interrupt,
    *,
    by: str,
    action: str,
    roles: Sequence[str],
    authorize: Authorize | None,
    clock: Clock | None,
) -> Flow[None]:
    """Refuse (audited) a decision the request does not allow or the decider may not make."""
    sec = section(intr.value)
    try:
        allowed = sec.get("allowed_decisions") or DEFAULT_ALLOWED
        if action not in allowed:
            raise DecisionNotAllowed(
                decision=action, allowed=list(allowed), thread_id=thread_id, approval_id=intr.id
            )
        check_decider(thread_id, intr, "approval", by=by, roles=roles, authorize=authorize)
    except (NotAuthorized, DecisionNotAllowed) as refused:
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=by,
            action=action,
            at=now_of(clock),
            fingerprint=sec.get("fingerprint"),
            outcome="not_authorized" if isinstance(refused, NotAuthorized) else "not_allowed",
            reason=refusal_reason(refused),
        )
        yield from AppendAudit(entries=[entry])
        refused_event(entry)
        raise


def lost_race_flow(
    thread_id: str,
    approval_id: str,
    stored: dict[str, Any],
    *,
    by: str,
    action: str,
    record: dict[str, Any],
) -> Flow[None]:
    """Audit an attempt that lost the compare-and-set, and raise :class:`AlreadyDecided`."""
    entry = refusal_entry(
        thread_id,
        approval_id,
        by=by,
        action=action,
        at=record_time(record),
        fingerprint=record.get("fingerprint"),
        outcome="already_decided",
        reason=already_reason(stored),
    )
    yield from AppendAudit(entries=[entry])
    refused_event(entry)
    raise AlreadyDecided(thread_id=thread_id, approval_id=approval_id, decision=stored)


def log_left_to_sweep(thread_id: str, approval_id: str, why: str) -> None:
    """Log a recorded decision whose resume is left to the sweeper."""
    log.warning(
        "decision on %r of thread %r recorded; not resumed now (%s): a sweep resumes the run",
        approval_id,
        thread_id,
        why,
    )


def record_time(record: dict[str, Any]) -> datetime:
    """When a decision record was made."""
    return datetime.fromisoformat(record["at"])


def decision_of(record: dict[str, Any]) -> Decision:
    """The :class:`Decision` a resumed node will see for a plain decision record."""
    return Decision(
        approved=bool(record.get("approved")),
        by=str(record.get("by", "")),
        at=datetime.fromisoformat(record["at"]),
        comment=record.get("comment"),
        timed_out=bool(record.get("timed_out", False)),
        approval_id=record.get("approval_id"),
        level=int(record.get("level", 0) or 0),
        roles=list(record.get("roles") or []),
        rule=record.get("rule"),
        extra=dict(record.get("extra") or {}),
        type=str(record.get("action") or ""),
        edited=record.get("edited"),
        response=record.get("response"),
        via=str(record.get("via") or ("sweeper" if record.get("timed_out") else "api")),
    )


def _env(graph: CompiledGraph) -> Env:
    return Env(saver_of(graph), graph)


def decide_env(target: GraphOrSaver, resume: bool) -> Env:
    """A compiled graph; or, for a decision that does not resume, a saver alone."""
    if isinstance(target, BaseCheckpointSaver):
        if resume:
            raise ValueError(
                "resuming needs the compiled graph: pass the graph, or resume=False to "
                "record the decision with the saver alone (a sweep resumes the run)"
            )
        return Env(target, None)
    return _env(target)
