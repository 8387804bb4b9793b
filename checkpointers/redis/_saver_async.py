"""The Redis saver: a thin shell that runs the core's commands on its runner.

Written once as async code; the sync saver's module is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import redis.asyncio
import redis.asyncio.cluster
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers import _sync_bridges as bridges
from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._leased_writes_async import async_run_leases
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._otel_saver_async import async_traced_saver
from langgraph_durable.checkpointers._run_lease_core import lease_settings
from langgraph_durable.checkpointers._run_leases_async import AsyncRunLeases
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers._url_options import conn_string_options
from langgraph_durable.checkpointers.redis import _layout
from langgraph_durable.checkpointers.redis import _thread_ops as threads
from langgraph_durable.checkpointers.redis._activity_store_async import AsyncRedisActivities
from langgraph_durable.checkpointers.redis._audit_store_async import AsyncRedisAudit
from langgraph_durable.checkpointers.redis._base import check_client, describe
from langgraph_durable.checkpointers.redis._connect_async import aconnect
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._decisions_async import AsyncRedisDecisions
from langgraph_durable.checkpointers.redis._keys import check_prefix
from langgraph_durable.checkpointers.redis._lease_store_async import AsyncRedisLeases
from langgraph_durable.checkpointers.redis._migration_store_async import AsyncRedisMigrationStore
from langgraph_durable.checkpointers.redis._outbox_store_async import AsyncRedisOutbox
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner
from langgraph_durable.checkpointers.redis._waits_async import AsyncRedisWaits


@bridges.sync_bridges(*bridges.SAVER_METHODS)  # async-only
# sync-only: @bridges.thread_bridges(*bridges.SAVER_METHODS)
@async_traced_saver("redis")
@async_run_leases
class AsyncRedisSaver(BaseCheckpointSaver[str]):
    """LangGraph checkpoint saver on plain Redis >= 6.2, Valkey or Redis Cluster.

    No modules needed. Every key of a thread shares one hash tag; ``put`` and
    ``get_tuple`` are one round trip each (a Lua script). See the README's
    Redis section for the layout, TTL and the wait index. The sync and the
    asyncio saver store alike and take the same options (one core drives
    both): the asyncio saver's sync methods work from other threads while its
    event loop runs, and the sync saver's async methods run the sync ones in
    a worker thread.

    The features beyond LangGraph's saver are attributes, each implementing
    the protocols of :mod:`langgraph_durable.checkpointers` for the saver's
    mode (an asyncio saver's also the sync ones, for other threads): ``waits``
    (``AsyncWaitIndex``, ``AsyncWaitClaims``), ``decisions``
    (``AsyncDecisionStore``), ``audit`` (``AsyncAuditLog``,
    ``AsyncVerifiableAudit``; an asyncio saver's also ``DeferredAudit``),
    ``leases`` (``AsyncLeaseStore``), ``activities`` (``ActivityStore``),
    ``outbox`` (``AsyncOutbox``) and ``migration_store`` (the
    ``AsyncMigrationStore`` that ``aupgrade_all`` drives).

    Args:
        client: A ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``
            created with ``decode_responses=False``.
        serde: Serializer (default: :func:`langgraph_durable.checkpointers.default_serde`).
        migrations: A ``StateMigrations``; its ``version`` tags every put.
        prefix: Key prefix (no ``{``/``}``); savers with different prefixes never meet.
        ttl: Seconds (or a timedelta) after which an idle thread's keys expire;
            ``None`` keeps them forever. Refreshed on every write.
        refresh_on_read: Also refresh the TTL when ``aget_tuple`` reads a thread.
        wait_grace: A thread with a pending marked interrupt whose deadline is
            set is kept at least until deadline + ``wait_grace``.
        leases: Run leases (README: "Run leases and recovery"): ``True`` for the
            defaults (30 s lease, 10 s heartbeat), a ``LeaseSettings``, or ``False``.
        deltas: How a channel value that extends its previous version (a
            growing message list) is stored: ``True`` (default) as a delta
            when :class:`langgraph_durable.checkpointers.DeltaPolicy` says so, ``False`` always
            whole, or a ``DeltaPolicy``. Reads understand deltas whatever this
            says.
        multitask: What a run does when it starts on a thread that a live run
            holds (README: "Concurrent runs of one thread"): ``None`` (default)
            runs it anyway, ``"reject"`` raises ``ThreadBusy`` before any node
            runs, ``"enqueue"`` waits for the holder to finish, then runs on
            the latest checkpoint. A run's config overrides it
            (``configurable["durable_multitask"]``). Needs run leases.
        multitask_timeout: How long an ``"enqueue"`` run waits before it
            raises ``ThreadBusy``: seconds or a ``timedelta`` (default 60 s;
            per run: ``configurable["durable_multitask_timeout"]``).

    Example:
        >>> async with AsyncRedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
        ...     await saver.setup()
        ...     graph = builder.compile(checkpointer=saver)
    """

    def __init__(
        self,
        client: redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster,
        *,
        serde: SerializerProtocol | None = None,
        migrations: Any = None,
        prefix: str = "lgd",
        ttl: float | timedelta | None = None,
        refresh_on_read: bool = False,
        wait_grace: float | timedelta = timedelta(hours=1),
        leases: LeaseSettings | bool = True,
        deltas: bool | DeltaPolicy = True,
        multitask: str | None = None,
        multitask_timeout: float | timedelta = DEFAULT_TIMEOUT,
    ) -> None:
        kinds = (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)
        check_client(client, kinds, "redis.asyncio.Redis or redis.asyncio.cluster.RedisCluster")
        self.client = client
        self._runner = AsyncRedisRunner(client, type(self).__name__)
        self.loop: asyncio.AbstractEventLoop | None = self._runner.loop  # async-only
        super().__init__(serde=serde or default_serde())
        self.core = RedisCore(
            serde=self.serde,
            prefix=prefix,
            ttl=ttl,
            refresh_on_read=refresh_on_read,
            wait_grace=wait_grace,
            migrations=migrations,
            deltas=deltas,
        )
        settings = lease_settings(leases)
        policy = multitask_policy(multitask, multitask_timeout, leases=settings is not None)
        self._compose()
        self.arun_leases = (
            AsyncRunLeases(self.leases, settings, multitask=policy) if settings else None
        )

    core: RedisCore
    """The key layout, the value codec and the operations of the saver's commands."""

    def _compose(self) -> None:
        # the feature stores, made on the runner and core (again with a new serializer)
        runner, core = self._runner, self.core
        self.waits = AsyncRedisWaits(runner, core)
        self.decisions = AsyncRedisDecisions(runner, core)
        self.audit = AsyncRedisAudit(runner, core, self.adelete_thread)
        self.leases = AsyncRedisLeases(runner, core)
        self.activities = AsyncRedisActivities(runner, core)
        self.outbox = AsyncRedisOutbox(runner, core)
        self.migration_store = AsyncRedisMigrationStore(runner, core)

    @property
    def prefix(self) -> str:
        """The key prefix this saver reads and writes under."""
        return self.core.keys.prefix

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer (LangGraph's attribute): setting it applies to what is stored next.

        ``saver.serde = ...`` (LangGraph's own test fixtures do it, as does
        ``with_allowlist`` on its shallow clone) gives this saver a core and
        feature stores of its own using the new serializer; a clone never
        changes the original's.
        """
        serde: SerializerProtocol = self.__dict__["_serde"]
        return serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self.__dict__["_serde"] = value
        core = self.__dict__.get("core")
        if core is not None:
            self.__dict__["core"] = core.with_serde(value)
            self._compose()  # the stores that encode values use the new serializer

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Monotonic string versions: ``<counter, 10 digits>.<48 random bits, hex>``.

        23 characters where langgraph-checkpoint-postgres writes ~51
        (``<counter, 32 digits>.<random float>``, what this saver wrote before
        layout step 5): a version is stored about ten times per step (the
        checkpoint's channel versions and versions seen, value fields, refs,
        delta bases), so the long form cost ~0.3x the payload of a growing
        thread. Versions of the long form still sort below: a
        10-digit counter >= 1 sorts after any 32-digit one below 10**22, so a
        thread written before goes on. The random part keeps apart the value
        fields of two forks that reach the same counter. (Monotonic up to
        10**10 versions of one channel.)
        """
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:010}.{random.getrandbits(48):012x}"

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, url: str, *, cluster: bool | None = None, **options: Any
    ) -> AsyncIterator[AsyncRedisSaver]:
        """A saver on a new client for ``url``, closed on exit.

        The URL the command line takes works here too: ``?prefix=NAME`` in it
        is the ``prefix`` option, taken off before redis-py sees the rest.

        Args:
            url: ``redis://``, ``rediss://`` or ``unix://`` URL, optionally
                with ``?prefix=NAME``.
            cluster: Use a cluster client; ``None`` asks the server (INFO cluster).
            **options: The constructor's keyword options (``prefix``: default
                the URL's, else ``lgd``).

        Raises:
            InvalidConfigError: before anything connects, for an address that
                is malformed or a Postgres one, a ``prefix`` whose URL value
                and keyword differ, or an invalid prefix.
        """
        url, found = conn_string_options(url, "redis", prefix=options.get("prefix"))
        options = {**options, **found}
        if "prefix" in options:
            check_prefix(options["prefix"])
        client = await aconnect(url, cluster)
        try:
            saver = cls(client, **options)
            try:
                yield saver
            finally:
                await saver.aclose()
        finally:
            await client.aclose()

    async def aclose(self) -> None:
        """Release the run leases this saver holds and stop their heartbeat.

        ``from_conn_string`` calls it on exit, before it closes its connection:
        a failed or cancelled run's lease is released then, not by a heartbeat
        that would outlive the connection. For a saver built on a connection,
        pool or client of your own, call it before you close that; the
        connection itself is left open. The saver is still usable afterwards.
        """
        if self.arun_leases is not None:
            await self.arun_leases.aclose()

    async def setup(self) -> None:
        """Apply pending layout steps under a lock; warn once if Redis persists nothing."""
        await self._runner.run("setup", _layout.setup(self.core, where=describe(self.client)))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The latest (or ``checkpoint_id``'s) checkpoint of a thread+namespace."""
        return await self._runner.run("get_tuple", self.core.get_tuple(config))

    async def aschema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept in
        the checkpoint's record, beside the metadata, which reads back exactly
        as written.
        """
        return await self._runner.run("schema_version", self.core.schema_version_of(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, filtered by metadata, before a cursor, up to ``limit``."""
        op = self.core.list_checkpoints(config, filter, before, limit)
        async for item in self._runner.iterate("list", op):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically; returns its config."""
        return await self._runner.run(
            "put", self.core.put(config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically (and index marked interrupts)."""
        await self._runner.run(
            "put_writes", self.core.put_writes(config, writes, task_id, task_path)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait of one thread (nothing else)."""
        await self._runner.run("delete_thread", threads.delete_thread(self.core, thread_id))
        await self.leases.adelete_lease(thread_id=thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints and writes that the given runs created."""
        await self._runner.run("delete_for_runs", threads.delete_for_runs(self.core, run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread onto another thread."""
        await self._runner.run(
            "copy_thread", threads.copy_thread(self.core, source_thread_id, target_thread_id)
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest`` (keeps what DeltaChannels rebuild from) or ``delete``."""
        await self._runner.run("prune", threads.prune(self.core, thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel, writes along the parent chain back to the nearest stored value."""
        return await self._runner.run(
            "get_delta_channel_history", self.core.delta_history(config, channels)
        )
