"""The notification outbox on Redis: ``saver.outbox``.

Its methods run the I/O-free operations of :mod:`._outbox` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods of its
protocol, for sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from langgraph_durable.checkpointers._outbox import Outbox, OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.redis import _outbox as outbox
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner


@sync_bridges(Outbox)  # async-only
class AsyncRedisOutbox:
    """The notification outbox over per-thread hashes: ``AsyncOutbox``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def aadd_notifications(self, events: list[OutboxEvent]) -> int:
        """Add events whose ids are not stored yet; return how many were added."""
        op = outbox.add_notifications(self._core, events)
        return await self._runner.run("add_notifications", op)

    async def aclaim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """Claim up to ``limit`` due events for ``owner`` until ``now + lease``."""
        op = outbox.claim_notifications(self._core, now, owner, lease, limit)
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
        op = outbox.settle_notification(
            self._core, event_id, thread_id, owner, delivered, error, retry_at
        )
        await self._runner.run("settle_notification", op)

    async def arelease_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """Drop ``owner``'s claim without counting it as an attempt (the event was not sent)."""
        op = outbox.release_notification(self._core, event_id, thread_id, owner)
        await self._runner.run("release_notification", op)

    async def apurge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` events delivered before ``delivered_before``; how many."""
        op = outbox.purge_notifications(self._core, delivered_before, limit)
        return await self._runner.run("purge_notifications", op)

    async def anotification_counts(self) -> OutboxCounts:
        """Pending and parked events over all threads."""
        return await self._runner.run("notification_counts", outbox.notification_counts(self._core))

    async def aretry_parked_notifications(self, *, now: datetime) -> int:
        """Give parked events a fresh budget of attempts, due at ``now``; how many."""
        op = outbox.retry_parked_notifications(self._core, now)
        return await self._runner.run("retry_parked_notifications", op)
