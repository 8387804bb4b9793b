# Generated from checkpointers/postgres/_migration_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The ``MigrationStore`` of the asyncio Postgres saver: ``saver.migration_store``.

What ``upgrade_all`` drives (:mod:`._migrate` holds its statements).
The sync store (:mod:`._migration_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers._otel_saver import sync_traced_migrations
from langgraph_durable.checkpointers.postgres._migrate import PostgresMigrationCore
from langgraph_durable.checkpointers.postgres._runner import PostgresRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


@sync_traced_migrations("postgresql")
class PostgresMigrations(PostgresMigrationCore):
    """``langgraph_durable.migrations.MigrationStore`` on PostgreSQL."""

    _runner: PostgresRunner

    def migration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_counts``."""
        return self._runner.run("migration_counts", self._op_migration_counts(below, all_history))

    def migration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_sample``."""
        return self._runner.run(
            "migration_sample", self._op_migration_sample(version, all_history, limit)
        )

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
        return self._runner.run(
            "migration_upgrade_batch",
            self._op_migration_batch(below, all_history, cursor, limit, upgrade),
        )

    def migration_status(self) -> list[VersionStatus]:
        """See ``langgraph_durable.migrations.MigrationStore.migration_status``."""
        return self._runner.run("migration_status", self._op_migration_status())
