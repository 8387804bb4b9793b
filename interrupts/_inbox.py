"""The approval inbox and the health check."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._driver import Env, Flow, adrive, drive
from langgraph_durable.interrupts._models import ApprovalHealth, ApprovalItem, BatchItemState
from langgraph_durable.interrupts._records import item_key, section
from langgraph_durable.interrupts._requests import GetDecisions, ListWaits, WaitCounts
from langgraph_durable.interrupts._store import Backend
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


def pending_approvals(
    saver: Saver,
    *,
    approver: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
) -> list[ApprovalItem]:
    """The approval inbox: what waits for a human, oldest deadline first.

    Answers from the saver's wait index on our savers; scans every thread through
    ``saver.list(None)`` on other savers.

    Args:
        saver: The checkpoint saver the graph runs on.
        approver: Keep approvals routed to this label or user id (and unrouted ones).
        thread_id: Keep one thread's approvals.
        limit: At most this many items.

    Returns:
        ``ApprovalItem`` list; batches list their items, open and decided.
    """
    return drive(inbox_flow(approver, thread_id, limit), Env(Backend(saver)))


async def apending_approvals(
    saver: Saver,
    *,
    approver: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
) -> list[ApprovalItem]:
    """Async twin of :func:`pending_approvals`."""
    return await adrive(inbox_flow(approver, thread_id, limit), Env(Backend(saver)))


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
    return drive(levels_flow(clock), Env(Backend(saver)))


def approval_health(saver: Saver, *, clock: Clock | None = None) -> ApprovalHealth:
    """How many approvals wait, how many are overdue, and how overdue the oldest is.

    Healthy waiting shows ``overdue`` near zero; a growing ``oldest_overdue_age``
    means no sweeper is running (or it is failing).
    """
    return drive(health_flow(clock), Env(Backend(saver)))


async def aapproval_health(saver: Saver, *, clock: Clock | None = None) -> ApprovalHealth:
    """Async twin of :func:`approval_health`."""
    return await adrive(health_flow(clock), Env(Backend(saver)))
