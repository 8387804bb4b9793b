"""The approval inbox and the health check: their flows, and approvals by level.

The public inbox and health calls that drive these flows are in
:mod:`._inbox_calls_async` (and its generated sync module).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._models import ApprovalHealth, ApprovalItem, BatchItemState
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._records import item_key, section
from langgraph_durable.interrupts._requests import GetDecisions, ListWaits, WaitCounts
from langgraph_durable.interrupts._types import Saver

INBOX_KINDS = ("approval", "batch")


def _parse(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _item(entry: WaitEntry, items: list[BatchItemState]) -> ApprovalItem:
    sec = section(entry.value)
    request = sec.get("request")
    if entry.info.kind == "batch":
        request = [i.get("item") for i in sec.get("items") or []]
    return ApprovalItem(
        thread_id=entry.thread_id,
        approval_id=entry.interrupt_id,
        kind=entry.info.kind,
        request=request,
        requested_at=_parse(sec.get("requested_at")) or entry.created_at,
        deadline=entry.info.deadline,
        escalation_level=entry.info.escalation_level,
        approvers=list(entry.info.approvers),
        items=items,
    )


def batch_items_flow(entry: WaitEntry) -> Flow[list[BatchItemState]]:
    """Each item of a batch wait with its open/decided state."""
    listed = section(entry.value).get("items") or []
    keys = [str(i.get("key")) for i in listed]
    got = yield from GetDecisions(
        thread_id=entry.thread_id,
        keys=[item_key(entry.interrupt_id, k) for k in keys],
    )
    out = []
    for raw, key in zip(listed, keys, strict=True):
        rec = got.get(item_key(entry.interrupt_id, key))
        out.append(
            BatchItemState(
                key=key,
                item=raw.get("item"),
                decided=rec is not None,
                approved=None if rec is None else rec.get("approved"),
                by=None if rec is None else rec.get("by"),
                at=None if rec is None else _parse(rec.get("at")),
                timed_out=bool(rec and rec.get("timed_out")),
            )
        )
    return out


def inbox_flow(
    approver: str | None, thread_id: str | None, limit: int | None
) -> Flow[list[ApprovalItem]]:
    """Pending approvals and batches, oldest deadline first."""
    entries: list[WaitEntry] = []
    for kind in INBOX_KINDS:
        entries += yield from ListWaits(
            kind=kind, approver=approver, thread_id=thread_id, limit=limit
        )
    entries.sort(key=lambda e: (e.info.deadline is None, e.info.deadline or 0, e.thread_id))
    if limit is not None:
        entries = entries[:limit]
    items = []
    for entry in entries:
        batch = (yield from batch_items_flow(entry)) if entry.info.kind == "batch" else []
        items.append(_item(entry, batch))
    return items


def health_flow(clock: Clock | None) -> Flow[ApprovalHealth]:
    """Counts of waiting and overdue approvals."""
    now = now_of(clock)
    waiting, overdue, oldest = yield from WaitCounts(now=now, kinds=list(INBOX_KINDS))
    return ApprovalHealth(
        waiting=waiting,
        overdue=overdue,
        oldest_overdue_age=None if oldest is None else now - oldest,
        checked_at=now,
    )


def levels_flow(clock: Clock | None) -> Flow[dict[int, tuple[int, int]]]:
    """Waiting and overdue approvals by escalation level, from the wait index."""
    now = now_of(clock)
    counts: dict[int, tuple[int, int]] = {}
    for kind in INBOX_KINDS:
        entries = yield from ListWaits(kind=kind, approver=None, thread_id=None, limit=None)
        for entry in entries:
            level = entry.info.escalation_level
            due = entry.info.deadline is not None and entry.info.deadline <= now
            waiting, overdue = counts.get(level, (0, 0))
            counts[level] = (waiting + 1, overdue + int(due))
    return counts


def approvals_by_level(saver: Saver, *, clock: Clock | None = None) -> dict[int, tuple[int, int]]:
    """``{escalation level: (waiting, overdue)}`` of the approvals and batches waiting.

    Read from the saver's wait index (its cost grows with what waits, not with
    finished threads); on other savers it scans every thread.
    """
    return drive(levels_flow(clock), Env(saver))
