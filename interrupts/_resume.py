"""Any resume is a decision: a ``Command(resume=...)`` turned into a recorded decision.

Studio, Agent Inbox, ``langgraph-sdk`` clients and Agent Server answer an
interrupt with ``Command(resume=value)``; LangGraph hands ``value`` to the node,
which is where this module runs. The value is read (:mod:`._shapes`), its
decider taken from the resuming run's config (:mod:`._identity`), checked
against the request's allowed decisions and the authorization policy, and
compare-and-set in the decision store with its audit entry, exactly as
``approve()`` does. Then:

* the winner's node goes on with the :class:`~langgraph_durable.interrupts.Decision`,
  and the raw value is replaced by the decision it became among the task's
  answers, so a node that re-runs later (it asks again further down) replays the
  recorded decision;
* a refused value (not understood, not allowed, not authorized, no identity,
  already decided by someone else or by the timeout) is audited, taken out of
  the task's answers and raised from the node: the resuming ``invoke`` raises it
  and the approval still waits for its next answer. A resume that loses the
  race never runs what follows the approval.

A decision made by ``approve()`` or the sweeper reaches the node as its
recorded record; the node checks that the record is the one stored before it
trusts it, so a resume cannot forge one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.config import get_config
from langgraph.types import Interrupt

from langgraph_durable.checkpointers import AsyncDecisionStore, extract_wait, feature
from langgraph_durable.interrupts._approve import (
    resume_value,
)
from langgraph_durable.interrupts._authz import (
    NotAuthorized,
    check_decider,
    policy_for_saver,
)
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    decided_entry,
    refusal_entry,
)
from langgraph_durable.interrupts._driver import Env, Flow, Req
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    InterruptsError,
    ResumeNotUnderstood,
)
from langgraph_durable.interrupts._identity import RunDecider, decider_of_config
from langgraph_durable.interrupts._pregel import (
    INTERRUPT,
    ResumeSlot,
    TaskContext,
    current_task,
    resume_slot,
    run_saver,
)
from langgraph_durable.interrupts._records import (
    decision_fields,
    decision_reason,
    new_record,
    section,
    won,
)
from langgraph_durable.interrupts._requests import AppendAudit, GetDecisions, RecordDecision

ANONYMOUS = "anonymous"
"""The decider of a resume that names nobody, on a request open to anyone."""


class NeedsAsync(InterruptsError, RuntimeError):
    """A sync helper was called in an ``async def`` node on an async saver's event loop.

    It cannot block that loop to read or record a decision: ``await`` the async
    twin (``arequest_approval``, ``arequest_batch_approval``) instead.
    """

    def __init__(self, *, helper: str) -> None:
        self.helper = helper
        super().__init__(
            f"{helper}() answered by Command(resume=...) in an async node on an async saver "
            f"cannot wait for the saver here: use `await a{helper}(...)` in async nodes"
        )


@dataclass(frozen=True)
class IoReady(Req[bool]):
    """Whether storage calls may run here: a sync flow must not block an async saver's loop.

    Always true for an async flow; a sync flow asks :func:`sync_io_ready`.
    """


def sync_io_ready(env: Env) -> bool:
    """Whether a sync flow may wait for ``env``'s storage: not on an async saver's running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return feature(env.saver, AsyncDecisionStore) is None


@dataclass(frozen=True)
class Ask(Req[Any]):
    """The node's ``interrupt(value)`` (traced, audited): the answer it resumes with."""

    value: Any
    audit: dict[str, Any]


@dataclass(frozen=True)
class GetTuple(Req[CheckpointTuple | None]):
    """The saver's checkpoint tuple of ``config``."""

    config: dict[str, Any]


def node_env() -> Env | None:
    """The env of the calling node (``None`` outside a graph with a saver)."""
    ctx = current_task()
    saver = None if ctx is None else run_saver(ctx.configurable)
    return None if saver is None else Env(saver)


def is_record(answer: Any) -> bool:
    """Whether ``answer`` is a decision record (from approve(), decide() or the sweeper)."""
    return isinstance(answer, dict) and "type" in answer and "decision_id" in answer


def verify_record_flow(answer: dict[str, Any], thread_id: str | None) -> Flow[None]:
    """Refuse a record that is not the one stored for its approval (a forged resume)."""
    key = str(answer.get("approval_id"))
    if thread_id is None or not (yield from IoReady()):
        return  # no storage reachable from here: trusted as before
    got = yield from GetDecisions(thread_id=thread_id, keys=[key])
    stored = got.get(key)
    if stored is None or stored.get("decision_id") != answer.get("decision_id"):
        raise NotAuthorized(
            thread_id=thread_id,
            approval_id=key,
            by=str(answer.get("by", "")),
            approvers=[],
            reason="the resume carries a decision record that was never recorded",
        )


def stored_interrupt_flow(ctx: TaskContext, interrupt_id: str) -> Flow[Any]:
    """The interrupt as it was raised and stored (what the decider saw), or ``None``."""
    config = {
        "configurable": {
            "thread_id": ctx.thread_id,
            "checkpoint_ns": ctx.parent_ns,
            "checkpoint_id": ctx.checkpoint_id,
        }
    }
    tup = yield from GetTuple(config=config)
    for _task, channel, value in getattr(tup, "pending_writes", None) or ():
        if channel != INTERRUPT:
            continue
        for intr in value if isinstance(value, (list, tuple)) else [value]:
            if getattr(intr, "id", None) == interrupt_id:
                return intr
    return None


def shown_interrupt(interrupt_id: str, stored: Any, rebuilt: Any) -> Interrupt:
    """What the decider was shown: the stored interrupt, else the one the node rebuilt."""
    return Interrupt(value=stored.value if stored is not None else rebuilt, id=interrupt_id)


def decider_for(
    decider: RunDecider | None, shown: Interrupt, thread_id: str, kind: str
) -> tuple[str, tuple[str, ...]]:
    """``(by, roles)`` of a resume; a resume naming nobody only where anyone may decide."""
    info = extract_wait(shown.value)
    forbid = section(shown.value).get("forbid") or ()
    if decider is not None:
        return decider.id, decider.roles
    if (info is not None and info.approvers) or forbid:
        who = ", ".join(info.approvers) if info is not None and info.approvers else "anyone"
        raise NotAuthorized(
            thread_id=thread_id,
            approval_id=shown.id,
            by=ANONYMOUS,
            approvers=list(info.approvers) if info is not None else [],
            reason=(
                "the resume names no decider: authenticate the run (Agent Server sets "
                "configurable.langgraph_auth_user) or set configurable.durable_decider"
                + (f"; this {kind} is for {who}" if info is not None and info.approvers else "")
            ),
        )
    return ANONYMOUS, ()


def _check_allowed(
    answers: Sequence[dict[str, Any]], allowed: Sequence[str], thread_id: str, approval_id: str
) -> None:
    for a in answers:
        if a["type"] not in allowed:
            raise DecisionNotAllowed(
                decision=a["type"],
                allowed=list(allowed),
                thread_id=thread_id,
                approval_id=approval_id,
                item=a.get("item"),
            )


def refuse_flow(
    exc: Exception,
    *,
    slot: ResumeSlot,
    thread_id: str,
    by: str,
    action: str,
    fingerprint: str | None,
    outcome: str,
    at: datetime,
    reason: str | None = None,
) -> Flow[None]:
    """Audit a refused resume, take it out of the task's answers, raise ``exc``.

    ``reason``: what the audit entry says after ``via Command(resume):``; default ``exc``.
    """
    entry = refusal_entry(
        thread_id,
        slot.interrupt_id,
        by=by,
        action=action,
        at=at,
        fingerprint=fingerprint,
        outcome=outcome,
        reason=f"via Command(resume): {exc if reason is None else reason}",
    )
    yield from AppendAudit(entries=[entry])
    slot.withdraw()
    raise exc


def approval_answer_flow(
    raw: Any, rebuilt: Any, *, at: datetime, helper: str = "request_approval"
) -> Flow[dict[str, Any]]:
    """Record a raw resume of an approval as its decision; the record the node resumes with.

    Raises the refusal (after auditing it and withdrawing the value) when the
    resume is not understood, not allowed, not authorized or lost the race.
    """
    from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED

    config = get_config()
    ctx, slot, thread_id = yield from resumed_slot_flow(config, raw, helper)
    stored = yield from stored_interrupt_flow(ctx, slot.interrupt_id)
    shown = shown_interrupt(slot.interrupt_id, stored, rebuilt)
    sec = section(shown.value)
    fp = sec.get("fingerprint")
    decider = decider_of_config(config)
    # who the refusal names if it comes before the decider is known
    by = decider.id if decider is not None else ANONYMOUS
    action = "decide"
    try:
        answer = read_resume_answers(raw, 1, thread_id, slot.interrupt_id)[0]
        action = answer["type"]
        _check_allowed(
            [answer], sec.get("allowed_decisions") or DEFAULT_ALLOWED, thread_id, shown.id
        )
        by, roles = decider_for(decider, shown, thread_id, "approval")
        if by != ANONYMOUS:
            policy = policy_for_saver(run_saver(ctx.configurable))
            check_decider(thread_id, shown, "approval", by=by, roles=roles, authorize=policy)
    except (ResumeNotUnderstood, DecisionNotAllowed, NotAuthorized) as exc:
        yield from refuse_flow(
            exc,
            slot=slot,
            thread_id=thread_id,
            by=by,
            action=action,
            fingerprint=fp,
            outcome=_REFUSAL_OUTCOMES.get(type(exc), "not_authorized"),
            at=at,
        )
        raise AssertionError("unreachable") from None
    record = _resume_record(answer, sec, shown, by, roles, decider, at)
    audit = decided_entry(
        thread_id, record, action=action, reason=decision_reason(record, "resume")
    )
    if record.get("action") == "edit":
        audit["fingerprint"] = record["edited_fingerprint"]
    got = yield from RecordDecision(thread_id=thread_id, key=shown.id, decision=record, audit=audit)
    if not won(got, record):
        yield from _lost_race_flow(
            got, slot, thread_id, by=by, action=action, fingerprint=fp, at=at
        )
    answered = resume_value(record, shown.value)
    slot.replace(answered)
    return answered


_REFUSAL_OUTCOMES: dict[type[Exception], str] = {
    ResumeNotUnderstood: "not_understood",
    DecisionNotAllowed: "not_allowed",
}
"""The audit outcome of a refused resume, by its error (any other: not authorized)."""


def resumed_slot_flow(
    config: RunnableConfig, raw: Any, helper: str
) -> Flow[tuple[TaskContext, ResumeSlot, str]]:
    """The resumed task, the slot of its answer and its thread, once storage is usable.

    A resume outside a graph run cannot be a decision; one whose storage calls
    need the async saver from a sync helper is withdrawn, so the approval waits
    for a usable answer.
    """
    ctx = current_task(config)
    slot = resume_slot(config, raw)
    if ctx is None or ctx.thread_id is None or slot is None:
        raise ResumeNotUnderstood(
            value=raw, reason="resumed outside a graph run with a checkpointer", accepted=[]
        )
    if not (yield from IoReady()):
        slot.withdraw()  # not kept as the answer: the approval waits for a usable one
        raise NeedsAsync(helper=helper)
    return ctx, slot, ctx.thread_id


def _lost_race_flow(
    got: Any,
    slot: ResumeSlot,
    thread_id: str,
    *,
    by: str,
    action: str,
    fingerprint: str | None,
    at: datetime,
) -> Flow[None]:
    """Audit a resume another decision beat, take it out of the task's answers, raise."""
    yield from refuse_flow(
        AlreadyDecided(thread_id=thread_id, approval_id=slot.interrupt_id, decision=got),
        slot=slot,
        thread_id=thread_id,
        by=by,
        action=action,
        fingerprint=fingerprint,
        outcome="already_decided",
        at=at,
        reason=already_reason(got),
    )


def read_resume_answers(
    raw: Any, count: int, thread_id: str, approval_id: str
) -> list[dict[str, Any]]:
    """The ``count`` answers a resume value holds, or its refusal naming the approval."""
    from langgraph_durable.interrupts._shapes import read_answers

    try:
        return read_answers(raw, count)
    except ResumeNotUnderstood as exc:
        raise ResumeNotUnderstood(
            value=raw,
            reason=exc.reason,
            accepted=exc.accepted,
            thread_id=thread_id,
            approval_id=approval_id,
        ) from None


def _resume_record(
    answer: dict[str, Any],
    sec: dict[str, Any],
    shown: Interrupt,
    by: str,
    roles: Sequence[str],
    decider: RunDecider | None,
    at: datetime,
) -> dict[str, Any]:
    """The decision record of an authorized resume, as ``approve()`` would store it."""
    info = extract_wait(shown.value)
    return new_record(
        type="decision",
        approval_id=shown.id,
        by=by,
        at=at,
        level=info.escalation_level if info else 0,
        fingerprint=sec.get("fingerprint"),
        roles=list(roles),
        via="resume",
        extra={"display_name": decider.display_name} if decider and decider.display_name else {},
        **decision_fields(answer, sec.get("request")),
    )
