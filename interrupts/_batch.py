"""Partial-batch approvals: each item decided on its own, exactly once.

Item decisions are compare-and-set in the :class:`~langgraph_durable.checkpointers.DecisionStore`
under ``f"{batch_id}/{item_key}"``, so they survive restarts and deploys while
the thread keeps waiting. When the last open item is decided (or the deadline
passes and the sweeper decides the rest by ``on_timeout``), one caller wins the
batch's completion record (key ``batch_id``) and resumes the run with every
item's decision. The node re-checks each item's fingerprint: items whose
payload changed since they were shown are asked again (or raise). The node
side lives in :mod:`._batch_node`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.types import Command

from langgraph_durable.checkpointers import ThreadBusy, WaitEntry
from langgraph_durable.interrupts._approve import (
    decide_env,
    find_pending_flow,
    log_left_to_sweep,
    resume_config,
    thread_of,
)
from langgraph_durable.interrupts._authz import (
    Authorize,
    NotAuthorized,
    check_decider,
    policy_of,
)
from langgraph_durable.interrupts._batch_models import BatchDecision, DecideResult, ItemDecision
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    api_reason,
    decided_entry,
    refusal_entry,
    refusal_reason,
    timeout_entry,
)
from langgraph_durable.interrupts._driver import Flow, adrive, drive, op
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._inputs import check_decisions, decider_args
from langgraph_durable.interrupts._records import (
    SYSTEM,
    age_at_least,
    decision_fields,
    item_key,
    new_record,
    section,
    won,
)
from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED

__all__ = [
    "BatchDecision",
    "DecideResult",
    "ItemDecision",
    "adecide",
    "batch_resume_value",
    "batch_timeout_flow",
    "complete_flow",
    "decide",
    "decide_flow",
    "record_items_flow",
]


# -- flows -------------------------------------------------------------------------------


def _items(value: Any) -> dict[str, dict[str, Any]]:
    return {str(i["key"]): i for i in section(value).get("items") or []}


def batch_resume_value(entry_or_value: Any, completion: dict[str, Any]) -> Flow[dict[str, Any]]:
    """Every item decision of a completed batch, as the node receives it."""
    value = getattr(entry_or_value, "value", entry_or_value)
    thread_id = getattr(entry_or_value, "thread_id", None) or completion["thread_id"]
    batch_id = completion["approval_id"]
    items = _items(value)
    got = yield op(
        "get_decisions", thread_id=thread_id, keys=[item_key(batch_id, k) for k in items]
    )
    decisions = {}
    for k, raw in items.items():
        rec = got.get(item_key(batch_id, k))
        if rec is not None:
            decisions[k] = {**rec, "request": raw.get("item")}
    return {**completion, "decisions": decisions}


ITEM_CONCURRENCY = 8
"""Item compare-and-sets of one call in flight at once (each its own statement or script)."""


def _record_item_flow(
    thread_id: str, key: str, decision: dict[str, Any], audit: dict[str, Any]
) -> Flow[dict[str, Any]]:
    stored: dict[str, Any] = yield op(
        "record_decision", thread_id=thread_id, key=key, decision=decision, audit=audit
    )
    return stored


def record_items_flow(
    thread_id: str,
    batch_id: str,
    mines: Mapping[str, dict[str, Any]],
    audits: Mapping[str, dict[str, Any]],
) -> Flow[dict[str, dict[str, Any]]]:
    """CAS each item's decision; the stored record of each key.

    The items are independent compare-and-sets (one statement or script each, no
    transaction spanning two), so they are sent concurrently: a call of 10 items
    waits about one round trip and commit instead of ten.
    """
    keys = list(mines)
    flows = [_record_item_flow(thread_id, item_key(batch_id, k), mines[k], audits[k]) for k in keys]
    if len(flows) <= 1 or ITEM_CONCURRENCY <= 1:
        stored = []
        for f in flows:
            stored.append((yield from f))
    else:
        stored = yield op("run_all", flows=flows, concurrency=min(len(flows), ITEM_CONCURRENCY))
    return dict(zip(keys, stored, strict=True))


def complete_flow(
    thread_id: str,
    batch_id: str,
    items: Mapping[str, Any],
    by: str,
    at: datetime,
    timed_out: bool,
    deferred: bool = False,
) -> Flow[dict[str, Any] | None]:
    """If every item is decided, CAS the completion record; return it if this call won.

    ``deferred``: the winner does not resume the run (``decide(..., resume=False)``);
    the record says so, and the next sweep resumes it at once.
    """
    # a count, not a read: its cost does not follow how many items are decided
    decided = yield op(
        "count_decisions", thread_id=thread_id, keys=[item_key(batch_id, k) for k in items]
    )
    if decided < len(items):
        return None
    mine = new_record(
        type="batch_complete",
        approval_id=batch_id,
        by=by,
        at=at,
        timed_out=timed_out,
        thread_id=thread_id,
        **({"deferred": True} if deferred else {}),  # type: ignore[arg-type]
    )
    stored = yield op("record_decision", thread_id=thread_id, key=batch_id, decision=mine)
    return stored if won(stored, mine) else None


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
        yield op("append_audit", entries=[entry])
        raise
    items = _items(intr.value)
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
        yield op("append_audit", entries=[entry])
        raise UnknownBatchItem(keys=unknown, batch_id=intr.id, thread_id=thread_id)
    out = DecideResult(batch_id=intr.id)
    lost: list[dict[str, Any]] = []
    mines: dict[str, dict[str, Any]] = {}
    audits: dict[str, dict[str, Any]] = {}
    for k, answer in wanted.items():
        mines[k] = new_record(
            type="decision",
            approval_id=intr.id,
            by=by,
            at=now,
            fingerprint=items[k].get("fingerprint"),
            roles=list(roles),
            item=k,
            via="api",
            **decision_fields({**answer, "comment": comment}, items[k].get("item")),
        )
        audits[k] = decided_entry(
            thread_id, mines[k], action=answer["type"], reason=api_reason(mines[k]), item=k
        )
        if mines[k].get("edited_fingerprint"):
            audits[k]["fingerprint"] = mines[k]["edited_fingerprint"]
    stored_all = yield from record_items_flow(thread_id, intr.id, mines, audits)
    for k, answer in wanted.items():
        mine, stored = mines[k], stored_all[k]
        if won(stored, mine):
            out.applied.append(k)
        else:
            out.already_decided[k] = stored
            lost.append(
                refusal_entry(
                    thread_id,
                    intr.id,
                    by=by,
                    action=answer["type"],
                    at=now,
                    fingerprint=items[k].get("fingerprint"),
                    outcome="already_decided",
                    reason=already_reason(stored),
                    item=k,
                )
            )
    if lost:
        yield op("append_audit", entries=lost)
    yield from _complete(out, config, thread_id, intr, items, by, now, clock, resume)
    # a call that won no item but found the batch complete and resumed it reports
    # that (its result), not AlreadyDecided: the run's result must reach someone
    if not out.applied and out.already_decided and not (out.completed or out.deferred):
        k, rec = next(iter(out.already_decided.items()))
        raise AlreadyDecided(thread_id=thread_id, approval_id=intr.id, decision=rec, item=k)
    return out


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
    busy = resume and bool((yield op("thread_busy", config=config_of_resume)))
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
        out.result = yield op("invoke", input=command, config=config_of_resume)
    except ThreadBusy as turned_away:
        out.deferred = True
        log_left_to_sweep(thread_id, intr.id, str(turned_away))
        return
    out.completed = True


def batch_timeout_flow(
    entry: WaitEntry, *, now: datetime, lease: timedelta
) -> Flow[dict[str, Any] | None]:
    """Sweeper: decide a due batch's open items by ``on_timeout``; the completion record."""
    thread_id, batch_id = entry.thread_id, entry.interrupt_id
    got = yield op("get_decisions", thread_id=thread_id, keys=[batch_id])
    done = got.get(batch_id)
    if done is not None:
        return done if age_at_least(done, now, lease) else None
    if entry.info.deadline is None or entry.info.deadline > now:
        return None
    items = _items(entry.value)
    action = (section(entry.value).get("on_timeout") or {}).get("action", "reject")
    decided = yield op(
        "get_decisions", thread_id=thread_id, keys=[item_key(batch_id, k) for k in items]
    )
    mines: dict[str, dict[str, Any]] = {}
    audits: dict[str, dict[str, Any]] = {}
    for k, raw in items.items():
        if item_key(batch_id, k) in decided:
            continue
        mines[k] = new_record(
            type="decision",
            approval_id=batch_id,
            by=SYSTEM,
            at=now,
            approved=action == "approve",
            timed_out=True,
            rule=f"on_timeout={action}",
            fingerprint=raw.get("fingerprint"),
            item=k,
        )
        audits[k] = timeout_entry(thread_id, mines[k], entry.info.deadline, item=k)
    yield from record_items_flow(thread_id, batch_id, mines, audits)
    completion = yield from complete_flow(thread_id, batch_id, items, SYSTEM, now, True)
    if completion is None:
        # a decider completed it at the same moment; resume theirs once it is a lease old
        got = yield op("get_decisions", thread_id=thread_id, keys=[batch_id])
        theirs = got.get(batch_id)
        return theirs if theirs is not None and age_at_least(theirs, now, lease) else None
    return completion


# -- public calls ------------------------------------------------------------------------


def decide(
    graph: Any,
    config: dict[str, Any],
    decisions: Mapping[Any, Any],
    *,
    by: str,
    comment: str | None = None,
    batch_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> DecideResult:
    """Decide any subset of a pending batch's items (``{key: decision}``).

    Each item is recorded once (compare-and-set per item). When this call decides
    the last open item, it resumes the run and returns its result.

    Args:
        graph: The compiled graph (with its saver). With ``resume=False`` the saver
            alone will do (a process that does not host the graph).
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        decisions: ``{item key: decision}`` for any subset of the open items; a
            decision is ``True``/``False``, ``"approve"``/``"reject"``,
            ``{"type": "edit", "args": <the item to act on>}`` or
            ``{"type": "respond", "message": "..."}`` (edit and respond where the
            batch's ``allowed_decisions`` allow them; anything else is refused, not
            read as truthy).
        by: Who decides (a non-empty string).
        comment: Free text kept with each item's decision.
        batch_id: Which batch, when the thread has several pending.
        roles: Roles the decider holds (for authorization policies); a string is one role.
        clock: Time source for the decision time and the resumed run.
        authorize: Policy for this call (see :func:`~langgraph_durable.interrupts.approve`).
        resume: ``False`` records the decisions (exactly once, as always) without
            resuming: a call that decides the last open item records the batch's
            completion (:attr:`DecideResult.deferred`) and the next
            :class:`~langgraph_durable.interrupts.ApprovalSweeper` pass (or the ``worker``/``sweep``
            command) resumes the run with it, at once, whatever the sweeper's lease.

    Raises:
        InvalidInput: a decision is not ``True``/``False``, or ``by``, ``comment``,
            ``roles``, a key or ``batch_id`` is not text every backend stores
            (names it and the item; nothing is recorded).
        UnknownBatchItem: a key is not in the batch (nothing is recorded).
        NotAuthorized: the decider may not decide this batch (nothing is recorded).
        AlreadyDecided: every item of the call was already decided by someone else
            (when only some were, or when the call still completed the batch and
            resumed the run, see :attr:`DecideResult.already_decided`); or
            ``batch_id`` names a batch completed before. Audited, as refusals are.
        NoPendingApproval: no batch (with that id) is waiting on the thread.
    """
    flow = decide_flow(
        config,
        decisions,
        by=by,
        comment=comment,
        batch_id=batch_id,
        roles=roles,
        clock=clock,
        authorize=policy_of(graph, authorize),
        resume=resume,
    )
    return drive(flow, decide_env(graph, resume))


async def adecide(
    graph: Any,
    config: dict[str, Any],
    decisions: Mapping[Any, Any],
    *,
    by: str,
    comment: str | None = None,
    batch_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> DecideResult:
    """Async twin of :func:`decide`."""
    flow = decide_flow(
        config,
        decisions,
        by=by,
        comment=comment,
        batch_id=batch_id,
        roles=roles,
        clock=clock,
        authorize=policy_of(graph, authorize),
        resume=resume,
    )
    return await adrive(flow, decide_env(graph, resume))
