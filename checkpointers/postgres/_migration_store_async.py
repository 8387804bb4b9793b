"""The ``MigrationStore`` of the asyncio Postgres saver: ``saver.migration_store``.

What ``aupgrade_all`` drives (:mod:`._migrate` holds its statements).
The sync store (:mod:`._migration_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers._otel_saver_async import async_traced_migrations
from langgraph_durable.checkpointers.postgres._migrate import PostgresMigrationCore
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


@async_traced_migrations("postgresql")
class AsyncPostgresMigrations(PostgresMigrationCore):
    """``langgraph_durable.migrations.AsyncMigrationStore`` on PostgreSQL."""

    _runner: AsyncPostgresRunner

    async def amigration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_counts``."""
        return await self._runner.run(
            "migration_counts", self._op_migration_counts(below, all_history)
        )

    async def amigration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_sample``."""
        return await self._runner.run(
            "migration_sample", self._op_migration_sample(version, all_history, limit)
        )

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
        return await self._runner.run(
            "migration_upgrade_batch",
            self._op_migration_batch(below, all_history, cursor, limit, upgrade),
        )

    async def amigration_status(self) -> list[VersionStatus]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_status``."""
        return await self._runner.run("migration_status", self._op_migration_status())
