"""The notification outbox: events written atomically with the facts they announce.

Our savers add an event to the outbox in the same atomic unit (a PostgreSQL
statement, a Redis script) as the fact itself:

============  ===============================================================
kind          written with
============  ===============================================================
requested     the wait index entry of an approval or batch (``put_writes``)
escalated     the same, for a wait whose escalation level is above 0
decided       a decision or a batch's completion (compare-and-set)
timed_out     the same, for a decision the sweeper made at the deadline
reminded      a reminder's audit entry
expiring      added by the worker (:meth:`Outbox.add_notifications`) for a
              wait whose deadline is near
============  ===============================================================

Every event id is derived from what it announces (:func:`event_id`), so an
event is added once however often its fact is written again, and a receiver
de-duplicates re-deliveries by it. Delivery state (attempts, a lease, parked)
is kept with the event; :mod:`interrupts` delivers them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

EVENT_KINDS = ("requested", "escalated", "expiring", "timed_out", "decided", "reminded")


def event_id(kind: str, thread_id: str, ref: str) -> str:
    """The stable id of the ``kind`` event of ``ref`` (an approval id) in ``thread_id``.

    ``kind:md5(len(thread_id) ':' thread_id ref)``: the PostgreSQL layout
    computes the same text in its triggers (``durable_outbox_id``).
    """
    digest = hashlib.md5(f"{len(thread_id)}:{thread_id}{ref}".encode(), usedforsecurity=False)
    return f"{kind}:{digest.hexdigest()}"


@dataclass(frozen=True)
class OutboxEvent:
    """One notification in the outbox.

    Attributes:
        event_id: Stable id (receivers de-duplicate by it).
        kind: One of :data:`EVENT_KINDS`.
        thread_id: The thread the event is about.
        approval_id: The approval (interrupt id; a batch's id).
        payload: What the event says (deadline, approvers, the decision...).
        created_at: When it was added (UTC).
        attempts: Delivery attempts so far, this claim included.
    """

    event_id: str
    kind: str
    thread_id: str
    approval_id: str
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    attempts: int = 0


@dataclass(frozen=True)
class OutboxCounts:
    """How many events wait for delivery and how many are parked."""

    pending: int
    parked: int


@runtime_checkable
class Outbox(Protocol):
    """Claims with leases over the outbox (implemented by our savers).

    An event is *due* when it is neither delivered nor parked, its next attempt
    time has come, and nobody holds a live lease on it.
    """

    def add_notifications(self, events: list[OutboxEvent]) -> int:
        """Add events whose ids are not stored yet; return how many were added."""
        ...

    def claim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """Claim up to ``limit`` due events for ``owner`` until ``now + lease``.

        Each claim counts as an attempt. Concurrent callers get disjoint events.
        """
        ...

    def settle_notification(
        self,
        *,
        event_id: str,
        thread_id: str,
        owner: str,
        delivered: bool,
        error: str | None = None,
        retry_at: datetime | None = None,
    ) -> None:
        """Mark an event delivered, or failed: retried at ``retry_at``, parked if ``None``."""
        ...

    def release_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """Drop ``owner``'s claim without counting it as an attempt (the event was not sent)."""
        ...

    def notification_counts(self) -> OutboxCounts:
        """Pending and parked events over all threads."""
        ...

    def purge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` events delivered before ``delivered_before``; how many.

        Pending and parked events are never deleted.
        """
        ...

    def retry_parked_notifications(self, *, now: datetime) -> int:
        """Give parked events a fresh budget of attempts, due at ``now``; how many."""
        ...


@runtime_checkable
class AsyncOutbox(Protocol):
    """Async twin of :class:`Outbox`."""

    async def aadd_notifications(self, events: list[OutboxEvent]) -> int:
        """See :meth:`Outbox.add_notifications`."""
        ...

    async def aclaim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """See :meth:`Outbox.claim_notifications`."""
        ...

    async def asettle_notification(
        self,
        *,
        event_id: str,
        thread_id: str,
        owner: str,
        delivered: bool,
        error: str | None = None,
        retry_at: datetime | None = None,
    ) -> None:
        """See :meth:`Outbox.settle_notification`."""
        ...

    async def arelease_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """See :meth:`Outbox.release_notification`."""
        ...

    async def anotification_counts(self) -> OutboxCounts:
        """See :meth:`Outbox.notification_counts`."""
        ...

    async def apurge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """See :meth:`Outbox.purge_notifications`."""
        ...

    async def aretry_parked_notifications(self, *, now: datetime) -> int:
        """See :meth:`Outbox.retry_parked_notifications`."""
        ...
