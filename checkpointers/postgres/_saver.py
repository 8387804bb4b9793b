# Generated from checkpointers/postgres/_saver_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The PostgreSQL saver: a runner, a core and feature stores.

A saver holds one runner (:mod:`._runner`), one core
(:class:`~._core.PostgresCore`: the statements of its schema and its value
codec) and its feature stores as attributes, each built on that runner and
core: ``waits``, ``decisions``, ``audit``, ``leases``, ``activities``,
``outbox`` and ``migration_store``.

Written once, as async code; the sync saver's module is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
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
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg import Connection
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers._delta import DeltaPolicy, resolve_policy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._leased_writes import sync_run_leases
from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._multitask import DEFAULT_TIMEOUT, multitask_policy
from langgraph_durable.checkpointers._otel_saver import sync_traced_saver
from langgraph_durable.checkpointers._run_lease_core import lease_settings
from langgraph_durable.checkpointers._run_leases import RunLeases
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers._url_options import conn_string_options
from langgraph_durable.checkpointers.postgres._activity_store import PostgresActivities
from langgraph_durable.checkpointers.postgres._audit_store import PostgresAudit
from langgraph_durable.checkpointers.postgres._core import PostgresCore, _Queries
from langgraph_durable.checkpointers.postgres._decisions import PostgresDecisions
from langgraph_durable.checkpointers.postgres._lease_store import PostgresLeases
from langgraph_durable.checkpointers.postgres._listing import ListPages, fetch
from langgraph_durable.checkpointers.postgres._migration_store import PostgresMigrations
from langgraph_durable.checkpointers.postgres._outbox_store import PostgresOutbox
from langgraph_durable.checkpointers.postgres._pool import DEFAULT_POOL_SIZE, sync_pool
from langgraph_durable.checkpointers.postgres._runner import PostgresRunner
from langgraph_durable.checkpointers.postgres._setup import op_setup
from langgraph_durable.checkpointers.postgres._stmt import check_schema, connect_kwargs
from langgraph_durable.checkpointers.postgres._waits import PostgresWaits


@sync_traced_saver("postgresql")
@sync_run_leases
class PostgresSaver(BaseCheckpointSaver[str]):
    """LangGraph checkpoint saver on PostgreSQL.

    Reads and writes the tables of langgraph-checkpoint-postgres (plus additive
    columns), so it adopts that saver's databases in place. A ``put`` is one
    statement; reading the latest checkpoint is one statement. The sync and
    the asyncio saver store alike and take the same options; the asyncio
    saver's sync methods (``get_tuple``...) work from another thread than its
    event loop's, as LangGraph's sync ``get_state`` needs.

    Args:
        conn: A psycopg ``Connection`` (used under a lock, one call at a
            time) or a pool of them (``ConnectionPool``). Connections
            should be ``autocommit=True``; otherwise each call commits at its end.
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
        if not isinstance(conn, (Connection, ConnectionPool)):
            raise InvalidConfigError(
                field="conn",
                reason=f"expected a psycopg Connection or ConnectionPool, got {conn!r}",
            )
        self.conn = conn
        self._runner = PostgresRunner(conn, check_schema(schema))
        self.core = PostgresCore(
            serde or default_serde(),
            _Queries(self._runner.schema),
            check_migrations(migrations),
            resolve_policy(deltas),
        )
        # sets the serializer in the core and builds the stores on it
        super().__init__(serde=serde or default_serde())
        settings = lease_settings(leases)
        policy = multitask_policy(multitask, multitask_timeout, leases=settings is not None)
        self.run_leases = RunLeases(self.leases, settings, multitask=policy) if settings else None

    _runner: PostgresRunner
    core: PostgresCore
    """The statements of the saver's schema and its value codec."""

    def _compose(self) -> None:
        # the feature stores, made on the runner and core (again with a new serializer)
        runner, core = self._runner, self.core
        self.waits = PostgresWaits(runner, core)
        self.decisions = PostgresDecisions(runner, core)
        self.leases = PostgresLeases(runner, core)
        self.audit = PostgresAudit(runner, core, self.leases)
        self.activities = PostgresActivities(runner, core)
        self.outbox = PostgresOutbox(runner, core)
        self.migration_store = PostgresMigrations(runner, core)

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer of every value the saver and its stores store."""
        return self.core.serde

    @serde.setter
    def serde(self, serde: SerializerProtocol) -> None:
        # with_allowlist sets it on a shallow copy of the saver: the copy gets
        # a core and stores of its own, sharing the runner and the caches
        self.core = self.core.with_serde(serde)
        self._compose()

    @property
    def delta_policy(self) -> DeltaPolicy:
        """When a growing value is stored as a delta (the ``deltas=`` option)."""
        return self.core.delta_policy

    @delta_policy.setter
    def delta_policy(self, policy: DeltaPolicy) -> None:
        self.core.delta_policy = policy

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Next channel version, ``"<counter:032>.<random:016>"`` as the official saver."""
        return self.core.get_next_version(current, channel)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pool_size: int | None = DEFAULT_POOL_SIZE,
        serde: SerializerProtocol | None = None,
        migrations: Any = None,
        schema: str | None = None,
        leases: LeaseSettings | bool = True,
        deltas: bool | DeltaPolicy = True,
        prepared_statements: bool | None = None,
        multitask: str | None = None,
        multitask_timeout: float | timedelta = DEFAULT_TIMEOUT,
    ) -> Iterator[PostgresSaver]:
        """Open a saver on ``conn_string``; closes its connection(s) on exit.

        The URL the command line takes works here too: ``?schema=NAME`` and
        ``?prepared_statements=false`` in it (``schema=NAME`` in a keyword
        DSN) are the keywords of the same names, taken off before libpq sees
        the rest.

        Args:
            conn_string: libpq URL or keyword DSN, optionally with ``schema``
                and ``prepared_statements`` parameters.
            pool_size: The most connections of the saver's ``ConnectionPool``
                (default :data:`~langgraph_durable.checkpointers.postgres.DEFAULT_POOL_SIZE`,
                4: concurrent graph runs commit side by side instead of
                queueing on one connection; it holds one connection while
                idle). ``None`` opens one connection instead, used under a
                lock, one call at a time. A pooled connection idle for a second
                or more is pinged before use, so one a proxy dropped while idle
                is replaced instead of failing the call; a single connection is
                not reopened.
            serde: See the class.
            migrations: See the class.
            schema: See the class; default the URL's ``?schema=``, else
                ``public``.
            leases: See the class.
            deltas: See the class.
            prepared_statements: ``False`` turns server-side prepared
                statements off, as a pooler in transaction mode needs
                (PgBouncer ``pool_mode = transaction``, RDS Proxy, Supavisor):
                each transaction may run on another server connection.
                Default the URL's ``?prepared_statements=``, else ``True``.
            multitask: See the class.
            multitask_timeout: See the class.

        Raises:
            InvalidConfigError: before anything connects, for an address
                that is malformed or a Redis one, a parameter whose URL value
                and keyword differ, or an invalid schema name.
        """
        conn_string, found = conn_string_options(
            conn_string, "postgres", schema=schema, prepared_statements=prepared_statements
        )
        prepared: bool = found.get("prepared_statements", True)
        options: dict[str, Any] = {
            "serde": serde,
            "migrations": migrations,
            "schema": check_schema(found.get("schema", "public")),
            "leases": leases,
            "deltas": deltas,
            "multitask": multitask,
            "multitask_timeout": multitask_timeout,
        }
        kwargs = connect_kwargs(prepared)
        if pool_size:
            # the pool connects in the background and would keep a caller waiting
            # on a server that is down or a refused login: one connection first
            # fails at once, with the server's own error
            probe = Connection.connect(conn_string, **kwargs)
            probe.close()
            with (
                sync_pool(conn_string, pool_size, prepared_statements=prepared) as pool,
                _closing(cls(pool, **options)) as saver,
            ):
                yield saver
        else:
            with (
                Connection.connect(conn_string, **kwargs) as conn,
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

    def setup(self, *, partitions: int | None = None) -> None:
        """Create or upgrade the tables (idempotent, safe to run concurrently).

        Args:
            partitions: Lay a new schema out with the per-thread tables
                (checkpoints, blobs, writes, waits, decisions) hash-partitioned
                by ``thread_id`` into this many partitions, so each thread's
                statements touch one partition (docs: operations/scaling).
                ``None`` (default): plain tables, or whatever the schema has. A
                schema already set up keeps its layout; a different count is
                refused, changing nothing.
        """
        self._runner.run("setup", op_setup(self.core.queries, partitions))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the latest of its thread+namespace."""
        return self._runner.run("get_tuple", self.core._op_get_tuple(config))

    def schema_version(self, config: RunnableConfig) -> int | None:
        """The schema version ``config``'s checkpoint is stored with, or ``None``.

        The checkpoint ``config`` names (``checkpoint_id``), or the latest of its
        thread+namespace. This is the version of the code that wrote it (or of
        the last ``upgrade_all`` that rewrote it); a read upgrades an older one
        in memory, so this tells what is stored, not what reads return. Kept
        beside the metadata, which reads back exactly as written.
        """
        return self._runner.run("schema_version", self.core._op_schema_version(config))

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
        pages = ListPages(self.core, config, filter, before, limit)
        while (stmt := pages.next_statement()) is not None:
            yield from pages.tuples(self._runner.run("list", fetch(stmt)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint (one atomic statement)."""
        return self._runner.run("put", self.core.put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes (and index marked interrupts), one statement."""
        self._runner.run("put_writes", self.core.put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and wait entry of a thread."""
        self._runner.run("delete_thread", self.core._op_delete_threads([thread_id]))
        self.leases.delete_lease(thread_id=thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that these runs created."""
        self._runner.run("delete_for_runs", self.core._op_delete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's whole history (all namespaces, writes, waits) to another id."""
        self._runner.run(
            "copy_thread", self.core._op_copy_thread(source_thread_id, target_thread_id)
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads: ``keep_latest`` per namespace (DeltaChannel-safe) or ``delete``."""
        self._runner.run("prune", self.core._op_prune(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per-channel writes and seed along the parent chain, in one query."""
        return self._runner.run(
            "get_delta_channel_history", self.core._op_delta_history(config, channels)
        )


@contextmanager
def _closing(saver: PostgresSaver) -> Iterator[PostgresSaver]:
    try:
        yield saver
    finally:
        saver.close()
