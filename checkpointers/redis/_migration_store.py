# Generated from checkpointers/redis/_migration_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The store ``upgrade_all`` drives on Redis: ``saver.migration_store``.

Its methods run the I/O-free operations of :mod:`._migrate` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers._otel_saver import sync_traced_migrations
from langgraph_durable.checkpointers.redis import _migrate as migrate
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner import RedisRunner
from langgraph_durable.migrations import BatchOutcome, Upgrade, VersionStatus


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
