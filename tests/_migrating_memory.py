"""An in-memory saver tagged like ours: LangGraph's InMemorySaver plus the version hooks.

Used to prove the pure upgrade logic on real graphs before (and independently
of) a database. It follows the savers' agreement: every ``put`` records the
code's schema version and stores the values of migrated versions; every read
goes through :func:`migrations.finish_read`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_durable.migrations import (
    SCHEMA_VERSION_KEY,
    StateMigrations,
    code_version,
    finish_read,
    stored_version_of,
    versions_to_store,
)


class MigratingMemorySaver(InMemorySaver):
    def __init__(self, *, migrations: StateMigrations | None = None, share: Any = None) -> None:
        super().__init__()
        if migrations is not None:
            migrations.validate()
        self.migrations = migrations
        if share is not None:  # a "second process" reading the same storage
            self.storage, self.writes, self.blobs = share.storage, share.writes, share.blobs

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        md = {**metadata, SCHEMA_VERSION_KEY: code_version(self.migrations)}
        return super().put(config, checkpoint, md, versions_to_store(checkpoint, new_versions))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        tup = super().get_tuple(config)
        if tup is None:
            return None
        return finish_read(tup, stored_version_of(tup.metadata), self.migrations)

    def list(self, config: RunnableConfig | None, **kw: Any) -> Iterator[CheckpointTuple]:
        for tup in super().list(config, **kw):
            yield finish_read(tup, stored_version_of(tup.metadata), self.migrations)
