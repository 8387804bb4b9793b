"""The asyncio PostgreSQL saver: a thin shell over :mod:`._core`."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from typing import Any, TypeVar

import psycopg
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
from psycopg import AsyncConnection, pq
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from langgraph_durable.checkpointers._delta import DeltaPolicy, resolve_policy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._run_leases import (
    AsyncRunLeases,
    async_run_leases,
    lease_settings,
)
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers._waits import WaitEntry
from langgraph_durable.checkpointers.postgres._activities import AsyncActivities
from langgraph_durable.checkpointers.postgres._approvals import AsyncApprovals
from langgraph_durable.checkpointers.postgres._audit import AsyncAudit
from langgraph_durable.checkpointers.postgres._core import Op, PostgresCore, _Queries
from langgraph_durable.checkpointers.postgres._errors import translate
from langgraph_durable.checkpointers.postgres._leases import AsyncLeases
from langgraph_durable.checkpointers.postgres._listing import ListPages, fetch
from langgraph_durable.checkpointers.postgres._migrate import PostgresMigrationAsync
from langgraph_durable.checkpointers.postgres._pool import async_pool
from langgraph_durable.checkpointers.postgres._stmt import (
    CALLERS_TRANSACTION,
    advance,
    connect_kwargs,
    within_callers_transaction,
)
from langgraph_durable.checkpointers.postgres._sync import _check_schema

T = TypeVar("T")


async def adrive(conn: AsyncConnection[Any], op: Op) -> Any:
    """Run one core operation on ``conn``; return its result.

    See :func:`langgraph_durable.checkpointers.postgres._sync.drive` (tuple
    rows whatever the connection's row factory; synced in pipeline mode; in
    a savepoint of the caller's transaction, committing nothing).
    """
    outer = False
    try:
        async with _synced_if_pipelined(conn) as pipeline:
            outer = await _in_callers_transaction(conn, pipeline)
            async with conn.transaction() if outer else contextlib.nullcontext():
                run = within_callers_transaction(op) if outer else op
                done, value = advance(run, None)
                while not done:
                    cur = conn.cursor(row_factory=tuple_row)  # a cursor per statement: see drive
                    await cur.execute(
                        value.query, value.params, prepare=value.prepare_as, binary=value.fetch
                    )
                    done, value = advance(run, await cur.fetchall() if value.fetch else None)
        if not outer and not conn.autocommit:
            await conn.commit()
        return value
    except BaseException:
        op.close()
        await _roll_back_ours(conn, outer)
        raise


def _synced_if_pipelined(conn: AsyncConnection[Any]) -> AbstractAsyncContextManager[Any]:
    if conn.pgconn.pipeline_status == pq.PipelineStatus.OFF:
        return contextlib.nullcontext()
    return conn.pipeline()


async def _in_callers_transaction(conn: AsyncConnection[Any], pipeline: Any) -> bool:
    """See the sync shell's ``_in_callers_transaction``."""
    if pipeline is not None and conn.info.transaction_status == TransactionStatus.ACTIVE:
        await pipeline.sync()
    return conn.info.transaction_status in CALLERS_TRANSACTION


async def _roll_back_ours(conn: AsyncConnection[Any], outer: bool) -> None:
    """See the sync shell's ``_roll_back_ours``."""
    if not outer and conn.info.transaction_status in CALLERS_TRANSACTION:
        with contextlib.suppress(psycopg.Error):
            await conn.rollback()


async def adrive_together(conn: AsyncConnection[Any], ops: list[Op]) -> list[Any]:
    """The async twin of :func:`langgraph_durable.checkpointers.postgres._sync.drive_together`."""
    outer = False
    try:
        async with conn.pipeline() as pipeline:
            outer = await _in_callers_transaction(conn, pipeline)
            async with conn.transaction() if outer else contextlib.nullcontext():
                runs = [within_callers_transaction(op) if outer else op for op in ops]
                results = await _drive_rounds(conn, runs)
        if not outer and not conn.autocommit:
            await conn.commit()
        return results
    except BaseException:
        for op in ops:
            op.close()
        await _roll_back_ours(conn, outer)
        raise


async def _drive_rounds(conn: AsyncConnection[Any], ops: list[Op]) -> list[Any]:
    results: list[Any] = [None] * len(ops)
    pending: dict[int, Any] = {}
    for i, op in enumerate(ops):
        done, value = advance(op, None)
        if done:
            results[i] = value
        else:
            pending[i] = value
    while pending:
        cursors = {}
        for i, stmt in pending.items():
            cur = conn.cursor(row_factory=tuple_row)
            await cur.execute(stmt.query, stmt.params, prepare=stmt.prepare_as, binary=stmt.fetch)
            cursors[i] = cur
        following: dict[int, Any] = {}
        for i, cur in cursors.items():
            rows = await cur.fetchall() if pending[i].fetch else None
            done, value = advance(ops[i], rows)
            if done:
                results[i] = value
            else:
                following[i] = value
        pending = following
    return results


@async_run_leases
class AsyncPostgresSaver(
    AsyncActivities,
    AsyncLeases,
    AsyncApprovals,
    AsyncAudit,
    PostgresMigrationAsync,
    PostgresCore,
    BaseCheckpointSaver[str],
):
    """LangGraph checkpoint saver on PostgreSQL (asyncio API).

    Same storage, options and behaviour as
    :class:`langgraph_durable.checkpointers.postgres.PostgresSaver`; see there.

    Args:
        conn: A psycopg ``AsyncConnection`` (used under a lock, one call at a
            time) or an ``AsyncConnectionPool``. Connections should be
            ``autocommit=True``; otherwise each call commits at its end.
        serde: Serializer; default :func:`langgraph_durable.checkpointers.default_serde`.
        migrations: A ``langgraph_durable.migrations.StateMigrations`` (its ``version`` is stored).
        schema: PostgreSQL schema holding the tables (default ``public``).
        leases: Run leases (see the README's "Run leases and recovery"): ``True``
            for the defaults (30 s lease, 10 s heartbeat), a ``LeaseSettings``,
            or ``False`` to turn them off.
        deltas: How a channel value that extends its previous version (a
            growing message list) is stored: ``True`` (default) as a delta
            when :class:`langgraph_durable.checkpointers.DeltaPolicy` says so, ``False`` always
            whole (as langgraph-checkpoint-postgres does), or a ``DeltaPolicy``.
            Reads understand deltas whatever this says.
        multitask: What a run does when it starts on a thread that a live run
            holds (README: "Concurrent runs of one thread"): ``None`` (default)
            runs it anyway, ``"reject"`` raises ``ThreadBusy`` before any node
            runs, ``"enqueue"`` waits for the holder to finish, then runs on
            the latest checkpoint. A run's config overrides it
            (``configurable["durable_multitask"]``). Needs run leases.
        multitask_timeout: How long an ``"enqueue"`` run waits before it
            raises ``ThreadBusy``: seconds or a ``timedelta`` (default 60 s;
            per run: ``configurable["durable_multitask_timeout"]``).

    The sync methods (``get_tuple``...) work from another thread than the
    event loop's, as LangGraph's sync ``get_state`` needs.
    """

    def __init__(
        self,
        conn: AsyncConnection[Any] | AsyncConnectionPool[Any],
        *,
        serde: SerializerProtocol | None = None,
        migrations: Any = None,
        schema: str = "public",
        leases: LeaseSettings | bool = True,
        deltas: bool | DeltaPolicy = True,
        multitask: str | None = None,
        multitask_timeout: float | timedelta = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(serde=serde or default_serde())
        if not isinstance(conn, (AsyncConnection, AsyncConnectionPool)):
            raise InvalidConfigError(
                field="conn",
                reason=f"expected a psycopg AsyncConnection or AsyncConnectionPool, got {conn!r}",
            )
        self.conn = conn
        self._q = _Queries(_check_schema(schema))
        self._migrations = check_migrations(migrations)
        self.delta_policy = resolve_policy(deltas)
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        settings = lease_settings(leases)
        policy = multitask_policy(multitask, multitask_timeout, leases=settings is not None)
        self.arun_leases = AsyncRunLeases(self, settings, multitask=policy) if settings else None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pool_size: int | None = None,
        serde: SerializerProtocol | None = None,
        migrations: Any = None,
        schema: str = "public",
        leases: LeaseSettings | bool = True,
        deltas: bool | DeltaPolicy = True,
        prepared_statements: bool = True,
        multitask: str | None = None,
        multitask_timeout: float | timedelta = DEFAULT_TIMEOUT,
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """Open a saver on ``conn_string``; closes its connection(s) on exit.

        Args:
            conn_string: libpq URL or DSN.
            pool_size: Use an ``AsyncConnectionPool`` of this many connections,
                so concurrent graph runs do not queue on one connection. A
                pooled connection idle for a second or more is pinged before
                use, so one a proxy dropped while idle is replaced instead of
                failing the call; a single connection is not reopened.
            serde: See the class.
            migrations: See the class.
            schema: See the class.
            leases: See the class.
            deltas: See the class.
            prepared_statements: ``False`` turns server-side prepared
                statements off, as a pooler in transaction mode needs; see
                :meth:`langgraph_durable.checkpointers.postgres.PostgresSaver.from_conn_string`.
            multitask: See the class.
            multitask_timeout: See the class.
        """
        options: dict[str, Any] = {
            "serde": serde,
            "migrations": migrations,
            "schema": schema,
            "leases": leases,
            "deltas": deltas,
            "multitask": multitask,
            "multitask_timeout": multitask_timeout,
        }
        if pool_size:
            async with (
                async_pool(conn_string, pool_size, prepared_statements=prepared_statements) as pool,
                _closing(cls(pool, **options)) as saver,
            ):
                yield saver
        else:
            kwargs = connect_kwargs(prepared_statements)
            async with (
                await AsyncConnection.connect(conn_string, **kwargs) as conn,
                _closing(cls(conn, **options)) as saver,
            ):
                yield saver

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

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        if isinstance(self.conn, AsyncConnectionPool):
            async with self.conn.connection() as conn:
                yield conn
        else:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                yield self.conn

    async def _run(self, operation: str, op: Op) -> Any:
        self._loop = asyncio.get_running_loop()
        try:
            async with self._connection() as conn:
                return await adrive(conn, op)
        except psycopg.Error as exc:
            raise translate(exc, operation, self._q.schema) from exc

    async def _run_together(self, operation: str, ops: list[Op]) -> list[Any]:
        self._loop = asyncio.get_running_loop()
        try:
            async with self._connection() as conn:
                return await adrive_together(conn, ops)
        except psycopg.Error as exc:
            raise translate(exc, operation, self._q.schema) from exc

    async def setup(self) -> None:
        """Create or upgrade the tables (idempotent, safe to run concurrently)."""
        await self._run("setup", self._op_setup())

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the latest of its thread+namespace."""
        return await self._run("get_tuple", self._op_get_tuple(config))  # type: ignore[no-any-return]

    async def aschema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept
        beside the metadata, which reads back exactly as written.
        """
        return await self._run("schema_version", self._op_schema_version(config))  # type: ignore[no-any-return]

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints matching ``config``/``filter``/``before``, newest first.

        Read in pages (see :mod:`._listing`): between two pages the saver
        holds no connection, cursor or transaction, so stopping early leaves
        nothing open and other calls on the saver run meanwhile.
        """
        pages = ListPages(self, config, filter, before, limit)
        while (stmt := pages.next_statement()) is not None:
            for tup in pages.tuples(await self._run("list", fetch(stmt))):
                yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint (one atomic statement)."""
        return await self._run(  # type: ignore[no-any-return]
            "put", self._op_put(config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes (and index marked interrupts), one statement."""
        await self._run("put_writes", self._op_put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait entry of a thread."""
        await self._run("delete_thread", self._op_delete_threads([thread_id]))
        await self._run("delete_lease", self._op_delete_lease(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that these runs created."""
        await self._run("delete_for_runs", self._op_delete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's whole history (all namespaces, writes, waits) to another id."""
        await self._run("copy_thread", self._op_copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads: ``keep_latest`` per namespace (DeltaChannel-safe) or ``delete``."""
        await self._run("prune", self._op_prune(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per-channel writes and seed along the parent chain, in one query."""
        return await self._run(  # type: ignore[no-any-return]
            "get_delta_channel_history", self._op_delta_history(config, channels)
        )

    async def alist_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WaitEntry]:
        """Pending marked interrupts, oldest deadline first (``None`` deadlines last)."""
        return await self._run(  # type: ignore[no-any-return]
            "list_waits", self._op_list_waits(kind, approver, thread_id, limit)
        )

    # -- sync bridge: for LangGraph's sync APIs called from another thread --

    def _bridge(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or not loop.is_running():
            coro.close()
            raise asyncio.InvalidStateError(
                "sync calls to AsyncPostgresSaver only work from another thread while its "
                "event loop runs; use the async methods (aget_tuple, alist, ...) instead"
            )
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync bridge to :meth:`aget_tuple`."""
        return self._bridge(self.aget_tuple(config))

    def schema_version(self, config: RunnableConfig) -> int | None:
        """Sync bridge to :meth:`aschema_version`."""
        return self._bridge(self.aschema_version(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync bridge to :meth:`alist`."""
        pages = ListPages(self, config, filter, before, limit)
        while (stmt := pages.next_statement()) is not None:
            yield from pages.tuples(self._bridge(self._run("list", fetch(stmt))))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync bridge to :meth:`aput`."""
        return self._bridge(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync bridge to :meth:`aput_writes`."""
        self._bridge(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync bridge to :meth:`adelete_thread`."""
        self._bridge(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync bridge to :meth:`adelete_for_runs`."""
        self._bridge(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync bridge to :meth:`acopy_thread`."""
        self._bridge(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Sync bridge to :meth:`aprune`."""
        self._bridge(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Sync bridge to :meth:`aget_delta_channel_history`."""
        return self._bridge(self.aget_delta_channel_history(config=config, channels=channels))

    def list_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WaitEntry]:
        """Sync bridge to :meth:`alist_waits`."""
        return self._bridge(
            self.alist_waits(kind=kind, approver=approver, thread_id=thread_id, limit=limit)
        )


@asynccontextmanager
async def _closing(saver: AsyncPostgresSaver) -> AsyncIterator[AsyncPostgresSaver]:
    try:
        yield saver
    finally:
        await saver.aclose()
