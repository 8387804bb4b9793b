"""A batch's stored decisions: each item compare-and-set, then the batch's completion.

Item decisions live in the decision store under ``f"{batch_id}/{item_key}"``;
the caller that decides the last open item (or the sweeper, deciding the open
items by ``on_timeout``) wins the completion record under ``batch_id``, whose
resume value carries every item's decision. Used by ``decide()``
(:mod:`._batch`), a batch answered by a resume (:mod:`._batch_resume`) and the
sweeper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.interrupts._decision_audit import decided_entry, timeout_entry
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._records import (
    SYSTEM,
    age_at_least,
    decision_fields,
    item_key,
    new_record,
    section,
    won,
)
from langgraph_durable.interrupts._requests import (
    CountDecisions,
    GetDecisions,
    RecordDecision,
    RunAll,
)

__all__ = [
    "batch_items",
    "batch_resume_value",
    "batch_timeout_flow",
    "complete_flow",
    "item_records",
    "record_items_flow",
]


def batch_items(value: Any) -> dict[str, dict[str, Any]]:
    return {str(i["key"]): i for i in section(value).get("items") or []}


def batch_resume_value(entry_or_value: Any, completion: dict[str, Any]) -> Flow[dict[str, Any]]:
    """Every item decision of a completed batch, as the node receives it."""
    value = getattr(entry_or_value, "value", entry_or_value)
    thread_id = getattr(entry_or_value, "thread_id", None) or completion["thread_id"]
    batch_id = completion["approval_id"]
    items = batch_items(value)
    got = yield from GetDecisions(thread_id=thread_id, keys=[item_key(batch_id, k) for k in items])
    decisions = {}
    for k, raw in items.items():
        rec = got.get(item_key(batch_id, k))
        if rec is not None:
            decisions[k] = {**rec, "request": raw.get("item")}
    return {**completion, "decisions": decisions}


ITEM_CONCURRENCY = 8
"""Item compare-and-sets of one call in flight at once (each its own statement or script)."""


def item_records(
    thread_id: str,
    approval_id: str,
    items: dict[str, Any],
    answers: dict[str, dict[str, Any]],
    *,
    by: str,
    roles: Sequence[str],
    at: datetime,
    via: str,
    reason: Callable[[dict[str, Any]], str | None],
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each answered item's decision record and its audit entry (``reason`` of the record)."""
    mines: dict[str, dict[str, Any]] = {}
    audits: dict[str, dict[str, Any]] = {}
    for k, answer in answers.items():
        mines[k] = new_record(
            type="decision",
            approval_id=approval_id,
            by=by,
            at=at,
            fingerprint=items[k].get("fingerprint"),
            roles=list(roles),
            item=k,
            via=via,
            **decision_fields(answer, items[k].get("item")),
        )
        audits[k] = decided_entry(
            thread_id, mines[k], action=answer["type"], reason=reason(mines[k]), item=k
        )
        if mines[k].get("edited_fingerprint"):
            audits[k]["fingerprint"] = mines[k]["edited_fingerprint"]
    return mines, audits


def _record_item_flow(
    thread_id: str, key: str, decision: dict[str, Any], audit: dict[str, Any]
) -> Flow[dict[str, Any]]:
    stored: dict[str, Any] = yield from RecordDecision(
        thread_id=thread_id, key=key, decision=decision, audit=audit
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
        stored = yield from RunAll(flows=flows, concurrency=min(len(flows), ITEM_CONCURRENCY))
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
    decided = yield from CountDecisions(
        thread_id=thread_id, keys=[item_key(batch_id, k) for k in items]
    )
    if decided < len(items):
        return None
    extra: dict[str, Any] = {"deferred": True} if deferred else {}
    mine = new_record(
        type="batch_complete",
        approval_id=batch_id,
        by=by,
        at=at,
        timed_out=timed_out,
        thread_id=thread_id,
        **extra,
    )
    stored = yield from RecordDecision(thread_id=thread_id, key=batch_id, decision=mine)
    return stored if won(stored, mine) else None


def batch_timeout_flow(
    entry: WaitEntry, *, now: datetime, lease: timedelta
) -> Flow[dict[str, Any] | None]:
    """Sweeper: decide a due batch's open items by ``on_timeout``; the completion record."""
    thread_id, batch_id = entry.thread_id, entry.interrupt_id
    got = yield from GetDecisions(thread_id=thread_id, keys=[batch_id])
    done = got.get(batch_id)
    if done is not None:
        return done if age_at_least(done, now, lease) else None
    if entry.info.deadline is None or entry.info.deadline > now:
        return None
    items = batch_items(entry.value)
    action = (section(entry.value).get("on_timeout") or {}).get("action", "reject")
    decided = yield from GetDecisions(
        thread_id=thread_id, keys=[item_key(batch_id, k) for k in items]
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
        got = yield from GetDecisions(thread_id=thread_id, keys=[batch_id])
        theirs = got.get(batch_id)
        return theirs if theirs is not None and age_at_least(theirs, now, lease) else None
    return completion
