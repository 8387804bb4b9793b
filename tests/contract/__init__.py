"""Backend-agnostic contract suite for our savers.

Every test in this package takes the ``saver`` fixture (see ``conftest.py``):
an *async-facing* saver built by one of the factories in ``SAVER_FACTORIES``.
Sync savers are wrapped in :class:`SyncAsAsync`, which runs their sync methods
in a worker thread, so the same test body proves the sync and the async API.

Adding a backend (e.g. Redis)
-----------------------------
1. Write a factory: an ``asynccontextmanager`` taking the pytest ``request``
   and yielding a ready saver (set up, isolated by its own schema/prefix via
   ``request.getfixturevalue("redis_prefix")``). Wrap a sync saver in
   ``SyncAsAsync``. Set ``saver.fresh = <zero-arg asynccontextmanager>`` if the
   backend can open a second, independent instance on the same storage (used
   by the cross-instance resume test).
2. Register it in ``SAVER_FACTORIES`` in ``tests/contract/conftest.py`` under a
   backend id such as ``"redis-sync"`` / ``"redis-async"``.
Every contract test then runs for it; nothing in the tests names a backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from tests._parts import method_of


class SyncAsAsync(BaseCheckpointSaver[Any]):
    """Async facade over a sync saver: every ``a*`` method calls the sync one in a thread."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Any) -> SyncAsAsync:
        return SyncAsAsync(self.inner.with_allowlist(extra_allowlist))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.inner.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.inner.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.inner.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.inner.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.inner.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.inner.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.inner.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(
            lambda: self.inner.get_delta_channel_history(config=config, channels=channels)
        )

    async def alist_waits(self, **kwargs: Any) -> Any:
        return await asyncio.to_thread(lambda: method_of(self.inner, "list_waits")(**kwargs))


__all__ = ["SyncAsAsync"]
