# Generated from checkpointers/postgres/_outbox_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The notification outbox on the asyncio Postgres saver: ``saver.outbox``.

The sync store (:mod:`._outbox_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from langgraph_durable.checkpointers._outbox import OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers.postgres._outbox import OutboxCore
from langgraph_durable.checkpointers.postgres._runner import PostgresRunner


class PostgresOutbox(OutboxCore):
    """``Outbox`` (and the sync ``Outbox``) on PostgreSQL."""

    _runner: PostgresRunner

    def add_notifications(self, events: list[OutboxEvent]) -> int:
        """Add events whose ids are not stored yet; return how many were added."""
        return self._runner.run("add_notifications", self._op_add_notifications(events))

    def claim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """Claim up to ``limit`` due events for ``owner`` until ``now + lease``."""
        op = self._op_claim_notifications(now, owner, lease, limit)
        return self._runner.run("claim_notifications", op)

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
        op = self._op_settle_notification(event_id, owner, delivered, error, retry_at)
        self._runner.run("settle_notification", op)

    def release_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """Drop ``owner``'s claim without counting it as an attempt (the event was not sent)."""
        self._runner.run("release_notification", self._op_release_notification(event_id, owner))

    def purge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` events delivered before ``delivered_before``; how many."""
        op = self._op_purge_notifications(delivered_before, limit)
        return self._runner.run("purge_notifications", op)

    def notification_counts(self) -> OutboxCounts:
        """Pending and parked events over all threads."""
        return self._runner.run("notification_counts", self._op_notification_counts())

    def retry_parked_notifications(self, *, now: datetime) -> int:
        """Give parked events a fresh budget of attempts, due at ``now``; how many."""
        op = self._op_retry_parked_notifications(now)
        return self._runner.run("retry_parked_notifications", op)
