"""A batch answered by a ``Command(resume=...)``: one decision per open item, then its completion.

The resume is authorized once for the batch, each item is compare-and-set like
``decide()``'s, then the batch's completion. Items someone else decided first
keep their decision; a resume that completes nothing (the batch was completed
first) raises ``AlreadyDecided``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.config import get_config
from langgraph.types import Interrupt

from langgraph_durable.interrupts._authz import NotAuthorized, check_decider, policy_for_saver
from langgraph_durable.interrupts._batch_record import (
    batch_resume_value,
    complete_flow,
    item_records,
    record_items_flow,
)
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    ResumeNotUnderstood,
)
from langgraph_durable.interrupts._identity import decider_of_config
from langgraph_durable.interrupts._pregel import ResumeSlot, run_saver
from langgraph_durable.interrupts._records import (
    decision_reason,
    section,
)
from langgraph_durable.interrupts._requests import GetDecisions
from langgraph_durable.interrupts._resume import (
    ANONYMOUS,
    decider_for,
    read_resume_answers,
    refuse_flow,
    resumed_slot_flow,
    shown_interrupt,
    stored_interrupt_flow,
)
from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED


def batch_answer_flow(raw: Any, rebuilt: Any, *, at: datetime, helper: str) -> Flow[dict[str, Any]]:
    """Record a raw resume of a batch: one decision per open item, then the completion."""
    config = get_config()
    ctx, slot, thread_id = yield from resumed_slot_flow(config, raw, helper)
    stored = yield from stored_interrupt_flow(ctx, slot.interrupt_id)
    shown = shown_interrupt(slot.interrupt_id, stored, rebuilt)
    sec = section(shown.value)
    items = {str(i["key"]): i for i in sec.get("items") or []}
    decider = decider_of_config(config)
    by = decider.id if decider is not None else ANONYMOUS
    try:
        answers = _answers(raw, items, sec, thread_id, shown)
        by, roles = decider_for(decider, shown, thread_id, "batch")
        if by != ANONYMOUS:
            policy = policy_for_saver(run_saver(ctx.configurable))
            check_decider(thread_id, shown, "batch", by=by, roles=roles, authorize=policy)
    except (ResumeNotUnderstood, DecisionNotAllowed, NotAuthorized) as exc:
        yield from _refuse_flow(exc, slot, thread_id, by, at)
        raise AssertionError("unreachable") from None
    mines, audits = item_records(
        thread_id,
        shown.id,
        items,
        answers,
        by=by,
        roles=roles,
        at=at,
        via="resume",
        reason=lambda record: decision_reason(record, "resume"),
    )
    yield from record_items_flow(thread_id, shown.id, mines, audits)
    completion = yield from complete_flow(thread_id, shown.id, items, by, at, False)
    if completion is None:
        got = yield from GetDecisions(thread_id=thread_id, keys=[shown.id])
        theirs = got.get(shown.id) or {}
        lost = AlreadyDecided(thread_id=thread_id, approval_id=shown.id, decision=theirs)
        yield from _refuse_flow(lost, slot, thread_id, by, at)
        raise AssertionError("unreachable")
    answered = yield from batch_resume_value(shown.value, {**completion, "thread_id": thread_id})
    slot.replace(answered)
    return answered


_OUTCOMES: dict[type[Exception], str] = {
    ResumeNotUnderstood: "not_understood",
    DecisionNotAllowed: "not_allowed",
    NotAuthorized: "not_authorized",
    AlreadyDecided: "already_decided",
}


def _refuse_flow(
    exc: Exception, slot: ResumeSlot, thread_id: str, by: str, at: datetime
) -> Flow[None]:
    """Audit a refused resume of the batch, take it out of the answers, and raise ``exc``."""
    yield from refuse_flow(
        exc,
        slot=slot,
        thread_id=thread_id,
        by=by,
        action="decide",
        fingerprint=None,
        outcome=_OUTCOMES[type(exc)],
        at=at,
    )


def _answers(
    raw: Any, items: dict[str, Any], sec: dict[str, Any], thread_id: str, shown: Interrupt
) -> dict[str, dict[str, Any]]:
    given = read_resume_answers(raw, len(items), thread_id, shown.id)
    allowed = sec.get("allowed_decisions") or DEFAULT_ALLOWED
    out = {}
    for k, answer in zip(items, given, strict=True):
        if answer["type"] not in allowed:
            raise DecisionNotAllowed(
                decision=answer["type"],
                allowed=list(allowed),
                thread_id=thread_id,
                approval_id=shown.id,
                item=k,
            )
        if answer["type"] == "edit" and isinstance(answer["args"], dict):
            answer = {**answer, "args": {a: v for a, v in answer["args"].items() if a != "key"}}
        out[k] = answer
    return out
