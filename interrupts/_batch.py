"""Partial-batch approvals: each item decided on its own, exactly once.

Item decisions are compare-and-set in the :class:`~langgraph_durable.checkpointers.DecisionStore`
under ``f"{batch_id}/{item_key}"``, so they survive restarts and deploys while
the thread keeps waiting. When the last open item is decided (or the deadline
passes and the sweeper decides the rest by ``on_timeout``), one caller wins the
batch's completion record (key ``batch_id``) and resumes the run with every
item's decision. The node re-checks each item's fingerprint: items whose
payload changed since they were shown are asked again (or raise).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from langgraph.config import get_config
from langgraph.types import Command
from pydantic import BaseModel, Field

from langgraph_durable.checkpointers import WAIT_KEY, ThreadBusy, WaitEntry, wait_marker
from langgraph_durable.interrupts._approve import (
    decide_env,
    find_pending_flow,
    log_left_to_sweep,
    resume_config,
    thread_of,
)
from langgraph_durable.interrupts._audit import ask, node_audit
from langgraph_durable.interrupts._authz import (
    Authorize,
    NotAuthorized,
    check_decider,
    policy_of,
    requested_by_of_run,
    thread_of_run,
)
from langgraph_durable.interrupts._clock import Clock, clock_from_config, now_of
from langgraph_durable.interrupts._decision_audit import (
    already_reason,
    decided_entry,
    refusal_entry,
    roles_reason,
    timeout_entry,
)
from langgraph_durable.interrupts._driver import Flow, adrive, drive, op
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    InvalidInput,
    StaleApproval,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._inputs import (
    check_decisions,
    check_forbid,
    check_names,
    check_optional_text,
    check_text,
    check_timeout,
    decider_args,
    requester_check,
)
from langgraph_durable.interrupts._records import (
    SYSTEM,
    age_at_least,
    fingerprint,
    item_key,
    new_record,
    section,
    won,
)


class ItemDecision(BaseModel):
    """How one batch item was decided.

    Attributes:
        key: The item key.
        approved: The decision.
        by: Who decided (``"system"`` for a timeout).
        at: When (UTC).
        comment: The decider's comment.
        timed_out: Decided by ``on_timeout``.
        history: Earlier decisions of this item that went stale.
    """

    key: str
    approved: bool
    by: str
    at: datetime
    comment: str | None = None
    timed_out: bool = False
    history: list[dict[str, Any]] = Field(default_factory=list)


class BatchDecision(BaseModel):
    """The outcome of :func:`request_batch_approval`.

    Attributes:
        approved: The approved items (the original objects, in request order).
        rejected: The rejected items.
        timed_out: Keys of the items decided by the timeout rule.
        decisions: Each item's :class:`ItemDecision`, by key.
    """

    approved: list[Any] = Field(default_factory=list)
    rejected: list[Any] = Field(default_factory=list)
    timed_out: list[str] = Field(default_factory=list)
    decisions: dict[str, ItemDecision] = Field(default_factory=dict)


class DecideResult(BaseModel):
    """What one :func:`decide` call did.

    Attributes:
        batch_id: The batch (interrupt id).
        applied: Keys whose decision this call recorded.
        already_decided: Keys somebody else decided first, with who and when.
        completed: Whether this call resumed the run (every item decided).
        result: The resumed run's result, when ``completed``.
        deferred: This call decided the last open item and recorded the batch's
            completion without resuming the run (``resume=False``, or a run holds
            the thread on a ``multitask="reject"`` saver); a sweep resumes it.
    """

    batch_id: str
    applied: list[str] = Field(default_factory=list)
    already_decided: dict[str, dict[str, Any]] = Field(default_factory=dict)
    completed: bool = False
    result: Any = None
    deferred: bool = False


# -- the node side ---------------------------------------------------------------------


def request_batch_approval(
    items: Sequence[Any],
    *,
    key: Callable[[Any], Any],
    timeout: timedelta | float | None = None,
    on_timeout: Literal["reject", "approve"] = "reject",
    approvers: str | Iterable[str] = (),
    on_stale: Literal["reask", "raise"] = "reask",
    clock: Clock | None = None,
    forbid: str | Iterable[str] = (),
) -> BatchDecision:
    """Ask for a decision on each item; call inside a node.

    Args:
        items: JSON-able items shown to the approvers.
        key: Item -> its unique key (converted to ``str``).
        timeout: When the open items get ``on_timeout``: a ``timedelta`` or a number
            of seconds, positive and at most 100 years; ``None`` waits forever.
        on_timeout: ``"reject"`` or ``"approve"``, applied by the sweeper to open items.
        approvers: Routing labels or user ids; a string is one approver.
        on_stale: An item whose payload changed after it was decided is asked again
            (``"reask"``) or raises ``StaleApproval`` (``"raise"``).
        clock: Time source (defaults to the run's clock).
        forbid: Separation of duties: ``["requester"]`` refuses decisions by whoever
            started the run (``config["configurable"]["requested_by"]``, which the run
            must then set).

    Returns:
        The :class:`BatchDecision` once every item is decided.

    Raises:
        InvalidInput: an argument is wrong (names it; nothing is asked), or
            ``forbid=["requester"]`` on a run that did not say who requested it.
    """
    if on_timeout not in ("reject", "approve"):
        raise InvalidInput(
            parameter="on_timeout", reason=f'expected "reject" or "approve", got {on_timeout!r}'
        )
    if on_stale not in ("reask", "raise"):
        raise InvalidInput(
            parameter="on_stale", reason=f'expected "reask" or "raise", got {on_stale!r}'
        )
    by_key: dict[str, Any] = {}
    for item in items:
        k = check_text(str(key(item)), "key")
        if k in by_key:
            raise InvalidInput(parameter="key", reason="two items have the same key", item=k)
        by_key[k] = item
    fps = {k: fingerprint(v) for k, v in by_key.items()}
    wait = check_timeout(timeout)
    forbidden = check_forbid(forbid)
    asked = check_names(approvers, "approvers")
    requested_by = check_optional_text(requested_by_of_run(), "requested_by")
    now = now_of(clock or clock_from_config(get_config()))
    timeout_s = None if wait is None else wait.total_seconds()
    decided: dict[str, dict[str, Any]] = {}
    history: dict[str, list[dict[str, Any]]] = {}
    open_keys = list(by_key)
    requested_at, round_ = now, 0
    while open_keys:
        deadline = None if timeout_s is None else requested_at + timedelta(seconds=timeout_s)
        value = {
            WAIT_KEY: wait_marker("batch", deadline, asked, 0),
            "batch": {
                "items": [{"key": k, "item": by_key[k], "fingerprint": fps[k]} for k in open_keys],
                "requested_at": requested_at.isoformat(),
                "on_timeout": {"action": on_timeout},
                "timeout_s": timeout_s,
                "round": round_,
                "forbid": forbidden,
                "requested_by": requested_by,
            },
        }
        answer = ask(
            value,
            at=requested_at,
            actor=requested_by,
            fingerprint=fingerprint([i["fingerprint"] for i in value["batch"]["items"]]),
            approvers=asked,
            deadline=deadline,
            level=0,
            refuse=requester_check(forbidden, requested_by),
        )
        if not isinstance(answer, dict) or answer.get("type") != "batch_complete":
            raise TypeError(
                "a batch must be resumed through langgraph_durable.decide() or the sweeper"
            )
        stale = []
        for k in open_keys:
            rec = (answer.get("decisions") or {}).get(k)
            if rec is None:
                stale.append(k)
            elif rec.get("fingerprint") not in (None, fps[k]):
                node_audit(
                    at=datetime.fromisoformat(answer["at"]),
                    approval_id=str(answer.get("approval_id")),
                    item=k,
                    actor=SYSTEM,
                    action="reask",
                    fingerprint=rec.get("fingerprint"),
                    outcome="stale",
                    reason=_stale_reason(on_stale, fps[k]),
                    dedupe_key=f"stale:{rec.get('decision_id')}",
                )
                if on_stale == "raise":
                    raise StaleApproval(
                        approval_id=str(answer.get("approval_id")),
                        decided_request=rec.get("request"),
                        current_request=by_key[k],
                        decision=rec,
                        item=k,
                        thread_id=thread_of_run(),
                    )
                history.setdefault(k, []).append(rec)
                stale.append(k)
            else:
                decided[k] = rec
        open_keys = stale
        requested_at = datetime.fromisoformat(answer["at"])
        round_ += 1
    result = BatchDecision()
    for k, item in by_key.items():
        rec = decided[k]
        d = ItemDecision(
            key=k,
            approved=bool(rec.get("approved")),
            by=str(rec.get("by", "")),
            at=datetime.fromisoformat(rec["at"]),
            comment=rec.get("comment"),
            timed_out=bool(rec.get("timed_out")),
            history=history.get(k, []),
        )
        result.decisions[k] = d
        (result.approved if d.approved else result.rejected).append(item)
        if d.timed_out:
            result.timed_out.append(k)
    return result


def _stale_reason(on_stale: str, now_fp: str) -> str:
    then = "asked again" if on_stale == "reask" else "StaleApproval raised"
    return f"payload changed since it was decided (now {now_fp}); {then}"


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


def decide_flow(
    config: dict[str, Any],
    decisions: Mapping[Any, bool],
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
        check_decider(thread_id, intr, "batch", by=by, roles=roles, authorize=authorize)
    except NotAuthorized as refused:
        entry = refusal_entry(
            thread_id,
            intr.id,
            by=by,
            action="decide",
            at=now,
            fingerprint=None,
            outcome="not_authorized",
            reason=f"{refused.reason}; allowed: {', '.join(refused.approvers) or 'anyone'}",
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
    for k, approved in wanted.items():
        mines[k] = new_record(
            type="decision",
            approval_id=intr.id,
            by=by,
            at=now,
            approved=approved,
            comment=comment,
            fingerprint=items[k].get("fingerprint"),
            roles=list(roles),
            item=k,
        )
        audits[k] = decided_entry(
            thread_id,
            mines[k],
            action="approve" if approved else "reject",
            reason=roles_reason(roles),
            item=k,
        )
    stored_all = yield from record_items_flow(thread_id, intr.id, mines, audits)
    for k, approved in wanted.items():
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
                    action="approve" if approved else "reject",
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
    decisions: Mapping[Any, bool],
    *,
    by: str,
    comment: str | None = None,
    batch_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> DecideResult:
    """Decide any subset of a pending batch's items (``{key: approved}``).

    Each item is recorded once (compare-and-set per item). When this call decides
    the last open item, it resumes the run and returns its result.

    Args:
        graph: The compiled graph (with its saver). With ``resume=False`` the saver
            alone will do (a process that does not host the graph).
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        decisions: ``{item key: approved}`` for any subset of the open items; each
            value ``True`` or ``False`` (anything else is refused, not read as truthy).
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
    decisions: Mapping[Any, bool],
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
