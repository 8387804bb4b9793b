"""The store ``upgrade_all`` drives on Redis: ``saver.migration_store``.

Its methods run the I/O-free operations of :mod:`._migrate` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers._otel_saver_async import async_traced_migrations
from langgraph_durable.checkpointers.redis import _migrate as migrate
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


@async_traced_migrations("redis")
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
