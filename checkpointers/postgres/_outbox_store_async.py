"""The notification outbox on the asyncio Postgres saver: ``saver.outbox``.

The sync store (:mod:`._outbox_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from langgraph_durable.checkpointers import _outbox as protocols  # async-only
from langgraph_durable.checkpointers._outbox import OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.postgres._outbox import OutboxCore
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner


@sync_bridges(protocols.Outbox)  # async-only
class AsyncPostgresOutbox(OutboxCore):
    """``AsyncOutbox`` (and the sync ``Outbox``) on PostgreSQL."""

    _runner: AsyncPostgresRunner

    async def aadd_notifications(self, events: list[OutboxEvent]) -> int:
        """Add events whose ids are not stored yet; return how many were added."""
        return await self._runner.run("add_notifications", self._op_add_notifications(events))

    async def aclaim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """Claim up to ``limit`` due events for ``owner`` until ``now + lease``."""
        op = self._op_claim_notifications(now, owner, lease, limit)
        return await self._runner.run("claim_notifications", op)

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
        """Mark an event delivered, or failed: retried at ``retry_at``, parked if ``None``."""
        op = self._op_settle_notification(event_id, owner, delivered, error, retry_at)
        await self._runner.run("settle_notification", op)

    async def arelease_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """Drop ``owner``'s claim without counting it as an attempt (the event was not sent)."""
        await self._runner.run(
            "release_notification", self._op_release_notification(event_id, owner)
        )

    async def apurge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` events delivered before ``delivered_before``; how many."""
        op = self._op_purge_notifications(delivered_before, limit)
        return await self._runner.run("purge_notifications", op)

    async def anotification_counts(self) -> OutboxCounts:
        """Pending and parked events over all threads."""
        return await self._runner.run("notification_counts", self._op_notification_counts())

    async def aretry_parked_notifications(self, *, now: datetime) -> int:
        """Give parked events a fresh budget of attempts, due at ``now``; how many."""
        op = self._op_retry_parked_notifications(now)
        return await self._runner.run("retry_parked_notifications", op)
