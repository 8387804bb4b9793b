# Generated from checkpointers/redis/_run_stores_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""A Redis saver's stores for runs and their side effects: leases, outbox, migrations.

As in :mod:`._stores`, each method runs one I/O-free operation
(:mod:`._lease_commands`, :mod:`._outbox`, :mod:`._migrate`) on the saver's
runner. The saver holds them as ``leases``, ``outbox`` and ``migration_store``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers._otel_saver import sync_traced_migrations
from langgraph_durable.checkpointers._outbox import OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers.redis import _migrate as migrate
from langgraph_durable.checkpointers.redis import _outbox as outbox
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._lease_commands import Flow, RedisLeaseCore, with_lease
from langgraph_durable.checkpointers.redis._runner import RedisRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


class RedisLeases:
    """Run leases, cluster-safe (layout: :mod:`._lease_commands`): ``LeaseStore``.

    Args:
        runner: The saver's runner.
        core: The saver's core (its key prefix and TTL).
    """

    def __init__(self, runner: RedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self.commands = RedisLeaseCore(core.keys.prefix, core.ttl_ms)
        """The I/O-free lease commands (the saver sends some with a run's writes)."""

    def run_with_lease(
        self, operation: str, op: Flow[Any], pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease commands, in one pipeline (``RunLeases.around``)."""
        return self._runner.run(operation, with_lease(self.commands, op, pre, post))

    def acquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.acquire_lease`."""
        op = self.commands.acquire(thread_id, owner, now, ttl)
        return self._runner.run("acquire_lease", op)

    def renew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.renew_leases`."""
        op = self.commands.renew(owner, thread_ids, now, ttl, progress)
        return self._runner.run("renew_leases", op)

    def release_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.release_lease`."""
        op = self.commands.release(thread_id, owner, now, reason, error)
        return self._runner.run("release_lease", op)

    def record_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.record_lease_error`."""
        op = self.commands.record_error(thread_id, owner, error)
        self._runner.run("record_lease_error", op)

    def find_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.find_expired_leases`."""
        return self._runner.run("find_expired_leases", self.commands.find_expired(now, limit))

    def claim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.claim_expired_lease`."""
        op = self.commands.claim(thread_id, token, owner, now, ttl)
        return self._runner.run("claim_expired_lease", op)

    def take_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.take_over_lease`."""
        op = self.commands.take_over(thread_id, token, renewed_at, owner, now, ttl)
        return self._runner.run("take_over_lease", op)

    def park_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.park_lease`."""
        op = self.commands.park(thread_id, token, now, reason)
        return self._runner.run("park_lease", op)

    def unpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.unpark_lease`."""
        return self._runner.run("unpark_lease", self.commands.unpark(thread_id, retry_at))

    def get_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.get_lease`."""
        return self._runner.run("get_lease", self.commands.get(thread_id))

    def list_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.list_leases`."""
        return self._runner.run("list_leases", self.commands.list(state, limit))

    def lease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.lease_counts`."""
        return self._runner.run("lease_counts", self.commands.counts(now))

    def delete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.delete_lease`."""
        self._runner.run("delete_lease", self.commands.delete(thread_id))


class RedisOutbox:
    """The notification outbox over per-thread hashes: ``Outbox``."""

    def __init__(self, runner: RedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    def add_notifications(self, events: list[OutboxEvent]) -> int:
        """Add events whose ids are not stored yet; return how many were added."""
        op = outbox.add_notifications(self._core, events)
        return self._runner.run("add_notifications", op)

    def claim_notifications(
        self, *, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> list[OutboxEvent]:
        """Claim up to ``limit`` due events for ``owner`` until ``now + lease``."""
        op = outbox.claim_notifications(self._core, now, owner, lease, limit)
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
        op = outbox.settle_notification(
            self._core, event_id, thread_id, owner, delivered, error, retry_at
        )
        self._runner.run("settle_notification", op)

    def release_notification(self, *, event_id: str, thread_id: str, owner: str) -> None:
        """Drop ``owner``'s claim without counting it as an attempt (the event was not sent)."""
        op = outbox.release_notification(self._core, event_id, thread_id, owner)
        self._runner.run("release_notification", op)

    def purge_notifications(self, *, delivered_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` events delivered before ``delivered_before``; how many."""
        op = outbox.purge_notifications(self._core, delivered_before, limit)
        return self._runner.run("purge_notifications", op)

    def notification_counts(self) -> OutboxCounts:
        """Pending and parked events over all threads."""
        return self._runner.run("notification_counts", outbox.notification_counts(self._core))

    def retry_parked_notifications(self, *, now: datetime) -> int:
        """Give parked events a fresh budget of attempts, due at ``now``; how many."""
        op = outbox.retry_parked_notifications(self._core, now)
        return self._runner.run("retry_parked_notifications", op)


@sync_traced_migrations("redis")
class RedisMigrationStore:
    """Bulk schema-version upgrades (:mod:`._migrate`): ``migrations.MigrationStore``."""

    def __init__(self, runner: RedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    def migration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_counts``."""
        op = migrate.counts(self._core, below, all_history)
        return self._runner.run("migration_counts", op)

    def migration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_sample``."""
        op = migrate.sample(self._core, version, all_history, limit)
        return self._runner.run("migration_sample", op)

    def migration_upgrade_batch(
        self,
        *,
        below: int,
        all_history: bool,
        cursor: Any,
        limit: int,
        upgrade: Callable[[CheckpointTuple, int], Upgrade],
    ) -> BatchOutcome:
        """See ``langgraph_durable.migrations.MigrationStore.migration_upgrade_batch``."""
        op = migrate.upgrade_batch(self._core, below, all_history, cursor, limit, upgrade)
        return self._runner.run("migration_upgrade_batch", op)

    def migration_status(self) -> list[VersionStatus]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_status``."""
        return self._runner.run("migration_status", migrate.status(self._core))
