"""The asyncio Redis saver: a thin shell that awaits the core's commands."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis import asyncio as aredis
from redis import exceptions as rx
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster

from langgraph_durable.checkpointers._async_run_leases import (
    AsyncRunLeases,
    async_run_leases,
    lease_settings,
)
from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._otel_saver import async_traced_saver
from langgraph_durable.checkpointers.redis import _layout
from langgraph_durable.checkpointers.redis import _thread_ops as threads
from langgraph_durable.checkpointers.redis._base import (
    RedisSaverBase,
    check_client,
    describe,
    opening_error,
)
from langgraph_durable.checkpointers.redis._lease_commands import with_lease
from langgraph_durable.checkpointers.redis._run_stores_async import (
    AsyncRedisLeases,
    AsyncRedisMigrationStore,
    AsyncRedisOutbox,
)
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner
from langgraph_durable.checkpointers.redis._stores_async import (
    AsyncRedisActivities,
    AsyncRedisAudit,
    AsyncRedisDecisions,
    AsyncRedisWaits,
)

T = TypeVar("T")

MAX_CONNECTIONS = 100
"""Connections of the client ``from_conn_string`` opens (as redis-py's default)."""
POOL_WAIT = 30.0
"""Seconds a call waits for a free connection before failing."""


async def aconnect(url: str, cluster: bool | None) -> aredis.Redis | AsyncRedisCluster:
    """An asyncio client for ``url``: a cluster client if ``cluster`` (``None``: ask).

    Raises:
        StorageUnavailableError: the server cannot be reached.
        StorageRefusedError: it refused the password or user.
    """
    try:
        if cluster is None:
            cluster = not url.startswith("unix") and await _is_cluster(url)
        if cluster:
            client = AsyncRedisCluster.from_url(url)
            try:
                await client.initialize()  # connects, as the sync cluster client does
            except BaseException:
                await client.aclose()
                raise
            return client
    except (rx.RedisError, rx.RedisClusterException) as exc:
        raise opening_error(exc, await _probe(url, exc)) from exc
    # redis-py's asyncio pool fails at once ("Too many connections") when more
    # than 100 calls are in flight; 200 concurrent graph runs on one saver hit
    # that. A blocking pool makes extra calls wait for a free connection.
    pool = aredis.BlockingConnectionPool.from_url(
        url, max_connections=MAX_CONNECTIONS, timeout=POOL_WAIT
    )
    return aredis.Redis.from_pool(pool)


async def _is_cluster(url: str) -> bool:
    probe = aredis.Redis.from_url(url)
    try:
        return bool((await probe.info("cluster")).get("cluster_enabled") == 1)
    finally:
        await probe.aclose()


async def _probe(url: str, exc: Exception) -> Exception | None:
    """See the sync saver's ``_probe``."""
    if isinstance(exc, rx.RedisError):
        return None
    client = aredis.Redis.from_url(url)
    try:
        await client.ping()
    except rx.RedisError as met:
        return met
    finally:
        await client.aclose()
    return None


@async_traced_saver("redis")
@async_run_leases
class AsyncRedisSaver(RedisSaverBase):
    """Asyncio LangGraph checkpoint saver on plain Redis >= 6.2, Valkey or Redis Cluster.

    Same storage, options and behaviour as :class:`langgraph_durable.checkpointers.redis.RedisSaver`
    (one core drives both). The sync methods work from other threads while
    the saver's event loop runs (as langgraph-checkpoint-postgres's async saver).

    The features beyond LangGraph's saver are attributes, each implementing
    the async protocols of :mod:`langgraph_durable.checkpointers` (and, for
    other threads, the sync ones): ``waits`` (``AsyncWaitIndex``,
    ``AsyncWaitClaims``), ``decisions`` (``AsyncDecisionStore``), ``audit``
    (``AsyncAuditLog``, ``AsyncVerifiableAudit``, ``DeferredAudit``),
    ``leases`` (``AsyncLeaseStore``), ``activities`` (``ActivityStore``),
    ``outbox`` (``AsyncOutbox``) and ``migration_store`` (the
    ``AsyncMigrationStore`` that ``aupgrade_all`` drives).

    Args:
        client: A ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``
            created with ``decode_responses=False``.
        serde: Serializer (default: :func:`langgraph_durable.checkpointers.default_serde`).
        migrations: A ``StateMigrations``; its ``version`` tags every put.
        prefix: Key prefix (no ``{``/``}``).
        ttl: Seconds (or a timedelta) after which an idle thread's keys expire.
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
        client: aredis.Redis | AsyncRedisCluster,
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
        check_client(
            client, (aredis.Redis, AsyncRedisCluster), "redis.asyncio.Redis or its RedisCluster"
        )
        self.client = client
        self._runner = AsyncRedisRunner(client, type(self).__name__)
        self.loop: asyncio.AbstractEventLoop | None = self._runner.loop
        self._init_core(
            serde=serde,
            migrations=migrations,
            prefix=prefix,
            ttl=ttl,
            refresh_on_read=refresh_on_read,
            wait_grace=wait_grace,
            deltas=deltas,
        )
        settings = lease_settings(leases)
        policy = multitask_policy(multitask, multitask_timeout, leases=settings is not None)
        self._compose()
        self.arun_leases = (
            AsyncRunLeases(self.leases, settings, multitask=policy) if settings else None
        )

    def _compose(self) -> None:
        runner, core = self._runner, self._core
        self.waits = AsyncRedisWaits(runner, core)
        self.decisions = AsyncRedisDecisions(runner, core)
        self.audit = AsyncRedisAudit(runner, core, self.adelete_thread)
        self.leases = AsyncRedisLeases(runner, core)
        self.activities = AsyncRedisActivities(runner, core)
        self.outbox = AsyncRedisOutbox(runner, core)
        self.migration_store = AsyncRedisMigrationStore(runner, core)

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, url: str, *, cluster: bool | None = None, **options: Any
    ) -> AsyncIterator[AsyncRedisSaver]:
        """A saver on a new asyncio client for ``url``, closed on exit.

        Args:
            url: ``redis://``, ``rediss://`` or ``unix://`` URL.
            cluster: Use a cluster client; ``None`` asks the server (INFO cluster).
            **options: The constructor's keyword options.
        """
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
        pool or client of your own, await it before you close that; the
        connection itself is left open. The saver is still usable afterwards.
        """
        if self.arun_leases is not None:
            await self.arun_leases.aclose()

    async def _run_with_lease(
        self, operation: str, op: Any, pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease commands, in one pipeline (``AsyncRunLeases.around``)."""
        return await self._runner.run(operation, with_lease(self.leases.commands, op, pre, post))

    async def _write_deferred_audit(self) -> None:
        # entries a sync helper handed over (DeferredAudit), before the write (_leased_writes)
        await self.audit._write_deferred_audit()

    # -- BaseCheckpointSaver (async) ------------------------------------------------
    async def setup(self) -> None:
        """Apply pending layout steps under a lock; warn once if Redis persists nothing."""
        await self._runner.run("setup", _layout.setup(self._core, where=describe(self.client)))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The latest (or ``checkpoint_id``'s) checkpoint of a thread+namespace."""
        return await self._runner.run("get_tuple", self._core.get_tuple(config))

    async def aschema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept in
        the checkpoint's record, beside the metadata, which reads back exactly
        as written.
        """
        return await self._runner.run("schema_version", self._core.schema_version_of(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, filtered by metadata, before a cursor, up to ``limit``."""
        op = self._core.list_checkpoints(config, filter, before, limit)
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
            "put", self._core.put(config, checkpoint, metadata, new_versions)
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
            "put_writes", self._core.put_writes(config, writes, task_id, task_path)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait of one thread (nothing else)."""
        await self._runner.run("delete_thread", threads.delete_thread(self._core, thread_id))
        await self.leases.adelete_lease(thread_id=thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints and writes that the given runs created."""
        await self._runner.run("delete_for_runs", threads.delete_for_runs(self._core, run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread onto another thread."""
        await self._runner.run(
            "copy_thread", threads.copy_thread(self._core, source_thread_id, target_thread_id)
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest`` (keeps what DeltaChannels rebuild from) or ``delete``."""
        await self._runner.run("prune", threads.prune(self._core, thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel, writes along the parent chain back to the nearest stored value."""
        return await self._runner.run(
            "get_delta_channel_history", self._core.delta_history(config, channels)
        )

    # -- sync methods: run on the saver's loop from another thread -----------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple` (from another thread than the saver's loop)."""
        return self._runner.blocking(self.aget_tuple(config))

    def schema_version(self, config: RunnableConfig) -> int | None:
        """Sync :meth:`aschema_version` (from another thread than the saver's loop)."""
        return self._runner.blocking(self.aschema_version(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync :meth:`alist` (from another thread than the saver's loop)."""

        async def collect() -> builtins.list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        yield from self._runner.blocking(collect())

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync :meth:`aput` (from another thread than the saver's loop)."""
        return self._runner.blocking(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync :meth:`aput_writes` (from another thread than the saver's loop)."""
        self._runner.blocking(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread` (from another thread than the saver's loop)."""
        self._runner.blocking(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync :meth:`adelete_for_runs` (from another thread than the saver's loop)."""
        self._runner.blocking(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync :meth:`acopy_thread` (from another thread than the saver's loop)."""
        self._runner.blocking(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Sync :meth:`aprune` (from another thread than the saver's loop)."""
        self._runner.blocking(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Sync :meth:`aget_delta_channel_history`."""
        return self._runner.blocking(
            self.aget_delta_channel_history(config=config, channels=channels)
        )
