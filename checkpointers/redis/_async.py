"""The asyncio Redis saver: a thin shell that awaits the core's commands."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

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

from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._errors import CheckpointerError
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._run_leases import (
    AsyncRunLeases,
    async_run_leases,
    lease_settings,
)
from langgraph_durable.checkpointers._waits import WaitEntry
from langgraph_durable.checkpointers.redis import _layout
from langgraph_durable.checkpointers.redis._activities import AsyncActivities
from langgraph_durable.checkpointers.redis._approvals import AsyncApprovals
from langgraph_durable.checkpointers.redis._audit import AsyncAudit
from langgraph_durable.checkpointers.redis._base import (
    REFUSED_CONNECTING,
    RETRIES,
    TOLERATED,
    UNAVAILABLE,
    RedisSaverBase,
    as_eval,
    check_client,
    check_replies,
    describe,
    opening_error,
    translate,
)
from langgraph_durable.checkpointers.redis._core import Call, Cmd, Emit, Sleep
from langgraph_durable.checkpointers.redis._leases import AsyncLeases
from langgraph_durable.checkpointers.redis._migrate import RedisMigrationAsync
from langgraph_durable.checkpointers.redis._wire import DIRECT, AsyncLane, direct_pool

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


@async_run_leases
class AsyncRedisSaver(
    AsyncActivities,
    AsyncLeases,
    AsyncApprovals,
    AsyncAudit,
    RedisMigrationAsync,
    RedisSaverBase,
):
    """Asyncio LangGraph checkpoint saver on plain Redis >= 6.2, Valkey or Redis Cluster.

    Same storage, options and behaviour as :class:`langgraph_durable.checkpointers.redis.RedisSaver`
    (one core drives both). The sync methods work from other threads while
    the saver's event loop runs (as langgraph-checkpoint-postgres's async saver).

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
        # plain (non-cluster) clients that pool their connections take the direct path
        pool = direct_pool(client, aredis.Redis)
        self._lane = AsyncLane(pool) if pool is not None else None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None
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
        self.arun_leases = AsyncRunLeases(self, settings, multitask=policy) if settings else None

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

    # -- the shell ------------------------------------------------------------
    async def _execute(self, cmds: list[Cmd]) -> list[Any]:
        # every command the core sends is idempotent, so a call that met a
        # dropped connection (a restart, a failover) is simply sent again
        for attempt in range(RETRIES):
            try:
                return await self._execute_once(cmds)
            except UNAVAILABLE as exc:
                # a refused password is an answer: sending again would not change it
                if attempt == RETRIES - 1 or isinstance(exc, REFUSED_CONNECTING):
                    raise
                await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    async def _execute_once(self, cmds: list[Cmd]) -> list[Any]:
        if self._lane is not None and all(c[0] in DIRECT for c in cmds):
            replies = await self._lane.execute(cmds)
            for i in check_replies(cmds, replies):
                replies[i] = await self.client.execute_command(*as_eval(cmds[i]))
            return replies
        if len(cmds) == 1:
            try:
                return [await self.client.execute_command(*cmds[0])]
            except rx.NoScriptError:
                return [await self.client.execute_command(*as_eval(cmds[0]))]
            except (rx.ResponseError, rx.RedisClusterException) as exc:
                if cmds[0][0] in TOLERATED:
                    return [exc]
                raise
        pipe = self.client.pipeline(transaction=False)
        for cmd in cmds:
            pipe.execute_command(*cmd)
        replies = list(await pipe.execute(raise_on_error=False))
        for i in check_replies(cmds, replies):
            replies[i] = await self.client.execute_command(*as_eval(cmds[i]))
        return replies

    async def _run(self, operation: str, gen: Any) -> Any:
        reply: Any = None
        failed: Exception | None = None
        try:
            while True:
                try:
                    # a command's error goes into the operation, so that its
                    # ``finally`` can still send what it must (setup's unlock)
                    step = gen.send(reply) if failed is None else gen.throw(failed)
                except StopIteration as stop:
                    return stop.value
                failed = None
                if isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    reply = None
                else:
                    try:
                        reply = await self._execute(step.cmds)
                    except Exception as exc:
                        failed, reply = exc, None
        except Exception as exc:
            raise translate(exc, operation) from exc

    async def _iterate(self, operation: str, gen: Any) -> AsyncIterator[Any]:
        reply: Any = None
        while True:
            try:
                step = gen.send(reply)
            except StopIteration:
                return
            except Exception as exc:
                raise translate(exc, operation) from exc
            if isinstance(step, Emit):
                reply = None
                yield step.value
            else:
                assert isinstance(step, Call)
                try:
                    reply = await self._execute(step.cmds)
                except Exception as exc:
                    raise translate(exc, operation) from exc

    # -- BaseCheckpointSaver (async) ------------------------------------------------
    async def setup(self) -> None:
        """Apply pending layout steps under a lock; warn once if Redis persists nothing."""
        await self._run("setup", _layout.setup(self._core, where=describe(self.client)))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The latest (or ``checkpoint_id``'s) checkpoint of a thread+namespace."""
        return await self._run("get_tuple", self._core.get_tuple(config))  # type: ignore[no-any-return]

    async def aschema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept in
        the checkpoint's record, beside the metadata, which reads back exactly
        as written.
        """
        return await self._run("schema_version", self._core.schema_version_of(config))  # type: ignore[no-any-return]

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, filtered by metadata, before a cursor, up to ``limit``."""
        gen = self._core.list_checkpoints(config, filter, before, limit)
        async for item in self._iterate("list", gen):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically; returns its config."""
        return await self._run(  # type: ignore[no-any-return]
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
        await self._run("put_writes", self._core.put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait of one thread (nothing else)."""
        await self._run("delete_thread", self._core.delete_thread(thread_id))
        await self._run("delete_lease", self._lc.delete(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints and writes that the given runs created."""
        await self._run("delete_for_runs", self._core.delete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread onto another thread."""
        await self._run("copy_thread", self._core.copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest`` (keeps what DeltaChannels rebuild from) or ``delete``."""
        await self._run("prune", self._core.prune(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel, writes along the parent chain back to the nearest stored value."""
        return await self._run(  # type: ignore[no-any-return]
            "get_delta_channel_history", self._core.delta_history(config, channels)
        )

    async def alist_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> list[WaitEntry]:
        """Pending marked interrupts, oldest deadline first (``None`` deadlines last)."""
        return await self._run(  # type: ignore[no-any-return]
            "list_waits",
            self._core.list_waits(kind=kind, approver=approver, thread_id=thread_id, limit=limit),
        )

    async def areconcile_waits(self) -> int:
        """Re-add to the due-wait shards every indexed wait they miss; returns how many."""
        return await self._run("reconcile_waits", self._core.reconcile_waits())  # type: ignore[no-any-return]

    # -- sync methods: run on the saver's loop from another thread -----------------
    def _sync(self, coro: Any) -> Any:
        if self.loop is None:
            coro.close()
            raise CheckpointerError(
                "AsyncRedisSaver's sync methods need the saver to be created inside a running "
                "event loop; use RedisSaver for sync code"
            )
        try:
            if asyncio.get_running_loop() is self.loop:
                coro.close()
                raise asyncio.InvalidStateError(
                    "Synchronous calls to AsyncRedisSaver are only allowed from a different "
                    "thread. From the main thread, use the async interface."
                )
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple` (from another thread than the saver's loop)."""
        return self._sync(self.aget_tuple(config))  # type: ignore[no-any-return]

    def schema_version(self, config: RunnableConfig) -> int | None:
        """Sync :meth:`aschema_version` (from another thread than the saver's loop)."""
        return self._sync(self.aschema_version(config))  # type: ignore[no-any-return]

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

        yield from self._sync(collect())

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync :meth:`aput` (from another thread than the saver's loop)."""
        return self._sync(self.aput(config, checkpoint, metadata, new_versions))  # type: ignore[no-any-return]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync :meth:`aput_writes` (from another thread than the saver's loop)."""
        self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread` (from another thread than the saver's loop)."""
        self._sync(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync :meth:`adelete_for_runs` (from another thread than the saver's loop)."""
        self._sync(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync :meth:`acopy_thread` (from another thread than the saver's loop)."""
        self._sync(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Sync :meth:`aprune` (from another thread than the saver's loop)."""
        self._sync(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Sync :meth:`aget_delta_channel_history`."""
        return self._sync(  # type: ignore[no-any-return]
            self.aget_delta_channel_history(config=config, channels=channels)
        )

    def list_waits(self, **kwargs: Any) -> builtins.list[WaitEntry]:
        """Sync :meth:`alist_waits` (from another thread than the saver's loop)."""
        return self._sync(self.alist_waits(**kwargs))  # type: ignore[no-any-return]
