"""Partial-batch approvals: each item decided on its own, exactly once.

Item decisions are compare-and-set in the :class:`~langgraph_durable.checkpointers.DecisionStore`
under ``f"{batch_id}/{item_key}"``, so they survive restarts and deploys while
the thread keeps waiting. When the last open item is decided (or the deadline
passes and the sweeper decides the rest by ``on_timeout``), one caller wins the
batch's completion record (key ``batch_id``) and resumes the run with every
item's decision. The node re-checks each item's fingerprint: items whose
payload changed since they were shown are asked again (or raise). The node
side lives in :mod:`._batch_node`; the public ``decide`` / ``adecide`` in
:mod:`._batch_calls_async` (and its generated sync module).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.types import Command, Interrupt

from langgraph_durable.checkpointers import ThreadBusy
from langgraph_durable.interrupts._approve import log_left_to_sweep, resume_config
from langgraph_durable.interrupts._authz import (
    Authorize,
    NotAuthorized,
    check_decider,
)
from langgraph_durable.interrupts._batch_models import BatchDecision, DecideResult, ItemDecision
from langgraph_durable.interrupts._batch_record import (
    batch_items,
    batch_resume_value,
    complete_flow,
    item_records,
    record_items_flow,
)
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    api_reason,
    refusal_entry,
    refusal_reason,
)
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._inputs import check_decisions, decider_args
from langgraph_durable.interrupts._pending import find_pending_flow, thread_of
from langgraph_durable.interrupts._records import (
    section,
    won,
)
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    Invoke,
    ThreadBusyNow,
)
from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED
from langgraph_durable.interrupts._telemetry import (
    current,
    link_request,
    refused_event,
)

__all__ = [
    "BatchDecision",
    "DecideResult",
    "ItemDecision",
    "decide_flow",
]


# -- flows -------------------------------------------------------------------------------


def _check_allowed(wanted: Mapping[str, dict[str, Any]], intr: Any, thread_id: str) -> None:
    allowed = section(intr.value).get("allowed_decisions") or DEFAULT_ALLOWED
    for k, answer in wanted.items():
        if answer["type"] not in allowed:
            raise DecisionNotAllowed(
                decision=answer["type"],
                allowed=list(allowed),
                thread_id=thread_id,
                approval_id=intr.id,
                item=k,
            )


def decide_flow(
    config: dict[str, Any],
    decisions: Mapping[Any, Any],
    *,
    by: str,
    comment: str | None,
    batch_id: str | None,
    roles: Sequence[str],
    clock: Clock | None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Flow[DecideResult]:
    """Record each item's decision (CAS per item), resume when the batch is complete.

    With ``resume=False`` a call that completes the batch records the completion
    as deferred (:attr:`DecideResult.deferred`); the next sweep resumes the run.
    Arguments that cannot be stored (a decision that is not ``True``/``False``)
    are refused first, before anything is read or recorded.
    """
    wanted = check_decisions(decisions)
    by, comment, roles, batch_id = decider_args(
        by=by, comment=comment, roles=roles, approval_id=batch_id, id_parameter="batch_id"
    )
    thread_id = thread_of(config)
    intr = yield from find_pending_flow(
        config, thread_id, "batch", batch_id, by=by, action="decide", clock=clock
    )
    now = now_of(clock)
    span = current()
    link_request(span, intr.value)
    span.set_attributes({"langgraph_durable.decider": by, "langgraph_durable.approval.id": intr.id})
    items = batch_items(intr.value)
    yield from _check_flow(wanted, intr, items, thread_id, by, roles, authorize, now)
    out = DecideResult(batch_id=intr.id)
    answers = {k: {**answer, "comment": comment} for k, answer in wanted.items()}
    mines, audits = item_records(
        thread_id, intr.id, items, answers, by=by, roles=roles, at=now, via="api", reason=api_reason
    )
    stored_all = yield from record_items_flow(thread_id, intr.id, mines, audits)
    lost = _split_outcomes(out, wanted, mines, stored_all, thread_id, intr, items, by=by, at=now)
    if lost:
        yield from AppendAudit(entries=lost)
    yield from _complete(out, config, thread_id, intr, items, by, now, clock, resume)
    # a call that won no item but found the batch complete and resumed it reports
    # that (its result), not AlreadyDecided: the run's result must reach someone
    if not out.applied and out.already_decided and not (out.completed or out.deferred):
        k, rec = next(iter(out.already_decided.items()))
        raise AlreadyDecided(thread_id=thread_id, approval_id=intr.id, decision=rec, item=k)
    return out


def _split_outcomes(
    out: DecideResult,
    wanted: dict[str, dict[str, Any]],
    mines: Mapping[str, dict[str, Any]],
    stored_all: Mapping[str, Any],
    thread_id: str,
    intr: Interrupt,
    items: dict[str, Any],
    *,
    by: str,
    at: datetime,
) -> list[dict[str, Any]]:
    """Sort each item into applied or already decided; the audit entries of the lost ones."""
    lost: list[dict[str, Any]] = []
    for k, answer in wanted.items():
        mine, stored = mines[k], stored_all[k]
        if won(stored, mine):
            out.applied.append(k)
            continue
        out.already_decided[k] = stored
        lost.append(
            refusal_entry(
                thread_id,
                intr.id,
                by=by,
                action=answer["type"],
                at=at,
                fingerprint=items[k].get("fingerprint"),
                outcome="already_decided",
                reason=already_reason(stored),
                item=k,
            )
        )
    return lost


def _check_flow(
    wanted: dict[str, dict[str, Any]],
    intr: Interrupt,
    items: dict[str, Any],
    thread_id: str,
    by: str,
    roles: Sequence[str],
    authorize: Authorize | None,
    now: datetime,
) -> Flow[None]:
    """Refuse (audited) answers the batch does not allow, deciders it does not, unknown items."""
    try:
        _check_allowed(wanted, intr, thread_id)
        check_decider(thread_id, intr, "batch", by=by, roles=roles, authorize=authorize)
    except (NotAuthorized, DecisionNotAllowed) as refused:
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=by,
            action="decide",
            at=now,
            fingerprint=None,
            outcome="not_authorized" if isinstance(refused, NotAuthorized) else "not_allowed",
            reason=refusal_reason(refused),
            item=getattr(refused, "item", None),
        )
        yield from AppendAudit(entries=[entry])
        refused_event(entry)
        raise
    unknown = [k for k in wanted if k not in items]
    if unknown:
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=by,
            action="decide",
            at=now,
            fingerprint=None,
            outcome="unknown_item",
            reason=f"unknown item keys: {', '.join(unknown)}; nothing recorded",
        )
        yield from AppendAudit(entries=[entry])
        raise UnknownBatchItem(keys=unknown, batch_id=intr.id, thread_id=thread_id)


def _complete(
    out: DecideResult,
    config: dict[str, Any],
    thread_id: str,
    intr: Any,
    items: Mapping[str, Any],
    by: str,
    now: datetime,
    clock: Clock | None,
    resume: bool,
) -> Flow[None]:
    """Complete the batch if every item is decided, and resume the run (or leave it to a sweep).

    A run holding the thread would turn the resume away (``multitask="reject"``):
    the completion is recorded as deferred, for the next sweep. One that takes
    the thread after that check turns the resume away after the completion is
    recorded: it stands, and a sweep resumes the run a sweeper's lease later.
    """
    config_of_resume = resume_config(config, clock, intr.value)
    busy = resume and bool((yield from ThreadBusyNow(config=config_of_resume)))
    completion = yield from complete_flow(
        thread_id, intr.id, items, by, now, False, deferred=not resume or busy
    )
    if completion is None:
        return
    if not resume or busy:
        out.deferred = True
        if busy:
            log_left_to_sweep(thread_id, intr.id, "a run holds the thread")
        return
    answer = yield from batch_resume_value(intr.value, completion)
    command: Command[Any] = Command(resume={intr.id: answer})
    try:
        out.result = yield from Invoke(input=command, config=config_of_resume)
    except ThreadBusy as turned_away:
        out.deferred = True
        log_left_to_sweep(thread_id, intr.id, str(turned_away))
        return
    out.completed = True
