"""A Redis saver's stores for runs and their side effects: leases, outbox, migrations.

As in :mod:`._stores_async`, each method runs one I/O-free operation
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
from langgraph_durable.checkpointers._otel_saver import async_traced_migrations  # async-only

# sync-only: from langgraph_durable.checkpointers._otel_saver import sync_traced_migrations
from langgraph_durable.checkpointers._outbox import Outbox, OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.redis import _migrate as migrate
from langgraph_durable.checkpointers.redis import _outbox as outbox
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._lease_commands import Flow, RedisLeaseCore, with_lease
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


class AsyncRedisLeases:
    """Run leases, cluster-safe (layout: :mod:`._lease_commands`): ``AsyncLeaseStore``.

    Args:
        runner: The saver's runner.
        core: The saver's core (its key prefix and TTL).
    """

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self.commands = RedisLeaseCore(core.keys.prefix, core.ttl_ms)
        """The I/O-free lease commands (the saver sends some with a run's writes)."""

    async def arun_with_lease(
        self, operation: str, op: Flow[Any], pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease commands, in one pipeline (``AsyncRunLeases.around``)."""
        return await self._runner.run(operation, with_lease(self.commands, op, pre, post))

    async def aacquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.acquire_lease`."""
        op = self.commands.acquire(thread_id, owner, now, ttl)
        return await self._runner.run("acquire_lease", op)

    async def arenew_leases(
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
        return await self._runner.run("renew_leases", op)

    async def arelease_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.release_lease`."""
        op = self.commands.release(thread_id, owner, now, reason, error)
        return await self._runner.run("release_lease", op)

    async def arecord_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.record_lease_error`."""
        op = self.commands.record_error(thread_id, owner, error)
        await self._runner.run("record_lease_error", op)

    async def afind_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.find_expired_leases`."""
        return await self._runner.run("find_expired_leases", self.commands.find_expired(now, limit))

    async def aclaim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.claim_expired_lease`."""
        op = self.commands.claim(thread_id, token, owner, now, ttl)
        return await self._runner.run("claim_expired_lease", op)

    async def atake_over_lease(
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
        return await self._runner.run("take_over_lease", op)

    async def apark_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.park_lease`."""
        op = self.commands.park(thread_id, token, now, reason)
        return await self._runner.run("park_lease", op)

    async def aunpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.unpark_lease`."""
        return await self._runner.run("unpark_lease", self.commands.unpark(thread_id, retry_at))

    async def aget_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.get_lease`."""
        return await self._runner.run("get_lease", self.commands.get(thread_id))

    async def alist_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.list_leases`."""
        return await self._runner.run("list_leases", self.commands.list(state, limit))

    async def alease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.lease_counts`."""
        return await self._runner.run("lease_counts", self.commands.counts(now))

    async def adelete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.delete_lease`."""
        await self._runner.run("delete_lease", self.commands.delete(thread_id))


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


@async_traced_migrations("redis")  # async-only
# sync-only: @sync_traced_migrations("redis")
class AsyncRedisMigrationStore:
    """Bulk schema-version upgrades (:mod:`._migrate`): ``migrations.AsyncMigrationStore``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def amigration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_counts``."""
        op = migrate.counts(self._core, below, all_history)
        return await self._runner.run("migration_counts", op)

    async def amigration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_sample``."""
        op = migrate.sample(self._core, version, all_history, limit)
        return await self._runner.run("migration_sample", op)

    async def amigration_upgrade_batch(
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
        return await self._runner.run("migration_upgrade_batch", op)

    async def amigration_status(self) -> list[VersionStatus]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_status``."""
        return await self._runner.run("migration_status", migrate.status(self._core))
