"""The synchronous PostgreSQL saver: a thin shell over :mod:`._core`."""

from __future__ import annotations

import builtins
import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

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
from psycopg import Connection, pq
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers._delta import DeltaPolicy, resolve_policy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._run_leases import RunLeases, lease_settings, sync_run_leases
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers._waits import WaitEntry
from langgraph_durable.checkpointers.postgres._activities import SyncActivities
from langgraph_durable.checkpointers.postgres._approvals import SyncApprovals
from langgraph_durable.checkpointers.postgres._audit import SyncAudit
from langgraph_durable.checkpointers.postgres._core import Op, PostgresCore, _Queries
from langgraph_durable.checkpointers.postgres._errors import translate
from langgraph_durable.checkpointers.postgres._leases import SyncLeases
from langgraph_durable.checkpointers.postgres._listing import ListPages, fetch
from langgraph_durable.checkpointers.postgres._migrate import PostgresMigrationSync
from langgraph_durable.checkpointers.postgres._pool import sync_pool
from langgraph_durable.checkpointers.postgres._stmt import (
    CALLERS_TRANSACTION,
    advance,
    connect_kwargs,
    within_callers_transaction,
)


def drive(conn: Connection[Any], op: Op) -> Any:
    """Run one core operation on ``conn``; return its result.

    Rows are read as tuples whatever row factory the caller's connection has;
    on a connection the caller put in pipeline mode, the operation runs in a
    nested pipeline block, whose exit syncs: every statement was applied (or
    raised) before this returns. In a transaction the caller opened, the
    operation runs in a savepoint of it and commits nothing (the caller does).
    """
    outer = False
    try:
        with _synced_if_pipelined(conn) as pipeline:
            outer = _in_callers_transaction(conn, pipeline)
            with conn.transaction() if outer else contextlib.nullcontext():
                run = within_callers_transaction(op) if outer else op
                done, value = advance(run, None)
                while not done:
                    # a cursor per statement: in pipeline mode a result that
                    # arrives late is set on the cursor of its own statement,
                    # never read as the result of a later one
                    cur = conn.cursor(row_factory=tuple_row)
                    cur.execute(
                        value.query, value.params, prepare=value.prepare_as, binary=value.fetch
                    )
                    done, value = advance(run, cur.fetchall() if value.fetch else None)
        if not outer and not conn.autocommit:
            conn.commit()
        return value
    except BaseException:
        op.close()
        _roll_back_ours(conn, outer)
        raise


def _synced_if_pipelined(conn: Connection[Any]) -> AbstractContextManager[Any]:
    if conn.pgconn.pipeline_status == pq.PipelineStatus.OFF:
        return contextlib.nullcontext()
    return conn.pipeline()


def _in_callers_transaction(conn: Connection[Any], pipeline: Any) -> bool:
    """Whether ``conn`` is in a transaction the caller opened (explicitly or implicitly)."""
    if pipeline is not None and conn.info.transaction_status == TransactionStatus.ACTIVE:
        pipeline.sync()  # the caller's own statements are queued: learn where they left it
    return conn.info.transaction_status in CALLERS_TRANSACTION


def _roll_back_ours(conn: Connection[Any], outer: bool) -> None:
    """After a failure: roll back the transaction the operation opened (not the caller's)."""
    if not outer and conn.info.transaction_status in CALLERS_TRANSACTION:
        # if the connection is gone, the pool or the caller replaces it
        with contextlib.suppress(psycopg.Error):
            conn.rollback()


def drive_together(conn: Connection[Any], ops: list[Op]) -> list[Any]:
    """Run several core operations on ``conn`` in one pipeline; return their results.

    Each round sends the next statement of every unfinished operation before
    reading any reply, so independent operations (a run's lease and its
    checkpoint) cost one round trip together. Statements up to a sync form
    one implicit transaction: if one fails, none of them is applied. In a
    transaction the caller opened, as :func:`drive`.
    """
    outer = False
    try:
        with conn.pipeline() as pipeline:
            outer = _in_callers_transaction(conn, pipeline)
            with conn.transaction() if outer else contextlib.nullcontext():
                runs = [within_callers_transaction(op) if outer else op for op in ops]
                results = _drive_rounds(conn, runs)
        if not outer and not conn.autocommit:
            conn.commit()
        return results
    except BaseException:
        for op in ops:
            op.close()
        _roll_back_ours(conn, outer)
        raise


def _drive_rounds(conn: Connection[Any], ops: list[Op]) -> list[Any]:
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
            cur.execute(stmt.query, stmt.params, prepare=stmt.prepare_as, binary=stmt.fetch)
            cursors[i] = cur
        following: dict[int, Any] = {}
        for i, cur in cursors.items():
            done, value = advance(ops[i], cur.fetchall() if pending[i].fetch else None)
            if done:
                results[i] = value
            else:
                following[i] = value
        pending = following
    return results


@sync_run_leases
class PostgresSaver(
    SyncActivities,
    SyncLeases,
    SyncApprovals,
    SyncAudit,
    PostgresMigrationSync,
    PostgresCore,
    BaseCheckpointSaver[str],
):
    """LangGraph checkpoint saver on PostgreSQL (sync API).

    Reads and writes the tables of langgraph-checkpoint-postgres (plus additive
    columns), so it adopts that saver's databases in place. A ``put`` is one
    statement; reading the latest checkpoint is one statement.

    Args:
        conn: A psycopg ``Connection`` (used under a lock, one call at a time)
            or a ``ConnectionPool``. Connections should be ``autocommit=True``;
            otherwise each call commits at its end.
        serde: Serializer; default :func:`langgraph_durable.checkpointers.default_serde` (no
            pickle, strict msgpack allowlist).
        migrations: A ``langgraph_durable.migrations.StateMigrations``; its ``version`` is stored
            with every checkpoint (``0`` without one).
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

    Example:
        >>> with PostgresSaver.from_conn_string(url) as saver:  # doctest: +SKIP
        ...     saver.setup()
        ...     graph = builder.compile(checkpointer=saver)
    """

    def __init__(
        self,
        conn: Connection[Any] | ConnectionPool[Any],
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
        if not isinstance(conn, (Connection, ConnectionPool)):
            raise InvalidConfigError(
                field="conn",
                reason=f"expected a psycopg Connection or ConnectionPool, got {conn!r}",
            )
        self.conn = conn
        self._q = _Queries(_check_schema(schema))
        self._migrations = check_migrations(migrations)
        self.delta_policy = resolve_policy(deltas)
        self._lock = threading.Lock()
        settings = lease_settings(leases)
        policy = multitask_policy(multitask, multitask_timeout, leases=settings is not None)
        self.run_leases = RunLeases(self, settings, multitask=policy) if settings else None

    @classmethod
    @contextmanager
    def from_conn_string(
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
    ) -> Iterator[PostgresSaver]:
        """Open a saver on ``conn_string``; closes its connection(s) on exit.

        Args:
            conn_string: libpq URL or DSN.
            pool_size: Use a ``ConnectionPool`` of this many connections
                (for threads sharing the saver); default one connection. A
                pooled connection idle for a second or more is pinged before
                use, so one a proxy dropped while idle is replaced instead of
                failing the call; a single connection is not reopened.
            serde: See the class.
            migrations: See the class.
            schema: See the class.
            leases: See the class.
            deltas: See the class.
            prepared_statements: ``False`` turns server-side prepared
                statements off, as a pooler in transaction mode needs
                (PgBouncer ``pool_mode = transaction``, RDS Proxy, Supavisor):
                each transaction may run on another server connection.
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
            with (
                sync_pool(conn_string, pool_size, prepared_statements=prepared_statements) as pool,
                _closing(cls(pool, **options)) as saver,
            ):
                yield saver
        else:
            with (
                Connection.connect(conn_string, **connect_kwargs(prepared_statements)) as conn,
                _closing(cls(conn, **options)) as saver,
            ):
                yield saver

    def close(self) -> None:
        """Release the run leases this saver holds and stop their heartbeat.

        ``from_conn_string`` calls it on exit, before it closes its connection:
        a failed or cancelled run's lease is released then, not by a heartbeat
        that would outlive the connection. For a saver built on a connection,
        pool or client of your own, call it before you close that; the
        connection itself is left open. The saver is still usable afterwards.
        """
        if self.run_leases is not None:
            self.run_leases.close()

    @contextmanager
    def _connection(self) -> Iterator[Connection[Any]]:
        if isinstance(self.conn, ConnectionPool):
            with self.conn.connection() as conn:
                yield conn
        else:
            with self._lock:
                yield self.conn

    def _run(self, operation: str, op: Op) -> Any:
        try:
            with self._connection() as conn:
                return drive(conn, op)
        except psycopg.Error as exc:
            raise translate(exc, operation, self._q.schema) from exc

    def _run_together(self, operation: str, ops: list[Op]) -> list[Any]:
        try:
            with self._connection() as conn:
                return drive_together(conn, ops)
        except psycopg.Error as exc:
            raise translate(exc, operation, self._q.schema) from exc

    def setup(self) -> None:
        """Create or upgrade the tables (idempotent, safe to run concurrently)."""
        self._run("setup", self._op_setup())

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the latest of its thread+namespace."""
        return self._run("get_tuple", self._op_get_tuple(config))  # type: ignore[no-any-return]

    def schema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept
        beside the metadata, which reads back exactly as written.
        """
        return self._run("schema_version", self._op_schema_version(config))  # type: ignore[no-any-return]

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints matching ``config``/``filter``/``before``, newest first.

        Read in pages (see :mod:`._listing`): between two pages the saver
        holds no connection, cursor or transaction, so stopping early leaves
        nothing open and other calls on the saver run meanwhile.
        """
        pages = ListPages(self, config, filter, before, limit)
        while (stmt := pages.next_statement()) is not None:
            yield from pages.tuples(self._run("list", fetch(stmt)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint (one atomic statement)."""
        return self._run(  # type: ignore[no-any-return]
            "put", self._op_put(config, checkpoint, metadata, new_versions)
        )

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes (and index marked interrupts), one statement."""
        self._run("put_writes", self._op_put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait entry of a thread."""
        self._run("delete_thread", self._op_delete_threads([thread_id]))
        self._run("delete_lease", self._op_delete_lease(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that these runs created."""
        self._run("delete_for_runs", self._op_delete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's whole history (all namespaces, writes, waits) to another id."""
        self._run("copy_thread", self._op_copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads: ``keep_latest`` per namespace (DeltaChannel-safe) or ``delete``."""
        self._run("prune", self._op_prune(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per-channel writes and seed along the parent chain, in one query."""
        return self._run(  # type: ignore[no-any-return]
            "get_delta_channel_history", self._op_delta_history(config, channels)
        )

    def list_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WaitEntry]:
        """Pending marked interrupts, oldest deadline first (``None`` deadlines last)."""
        return self._run(  # type: ignore[no-any-return]
            "list_waits", self._op_list_waits(kind, approver, thread_id, limit)
        )


@contextmanager
def _closing(saver: PostgresSaver) -> Iterator[PostgresSaver]:
    try:
        yield saver
    finally:
        saver.close()


def _check_schema(schema: str) -> str:
    if not isinstance(schema, str) or not schema or "\x00" in schema or len(schema) > 63:
        raise InvalidConfigError(field="schema", reason="must be a non-empty name of <= 63 chars")
    return schema
