"""Statements, the rendered queries of one schema, and config parsing.

The vocabulary shared by the I/O-free core modules and the sync/async shells.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from psycopg.pq import TransactionStatus

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.postgres import _sql, _sql_threads


@dataclass(frozen=True, slots=True)
class Stmt:
    """One statement for a shell to run.

    Attributes:
        query: The rendered query (placeholders ``%(name)s``).
        params: Its parameters, or ``None`` for a parameterless script.
        fetch: Whether the shell sends the result rows back.
        prepare: ``False`` for statements whose plan depends on array sizes.
    """

    query: str
    params: Mapping[str, Any] | None = None
    fetch: bool = False
    prepare: bool | None = None

    @property
    def prepare_as(self) -> bool | None:
        """What the shells pass as psycopg's ``prepare=``.

        A statement without parameters (a setup step's script, ``BEGIN``) is
        never prepared: a script of several statements cannot be, and the
        savers' own connections prepare on first use (:data:`CONNECT_KWARGS`).
        """
        return False if self.params is None else self.prepare


# The savers' own connections (from_conn_string): autocommit, so a write that
# returned is committed; statements prepared on their first execution, so a
# fresh connection (a pool's, a new sweeper's) does not parse and plan each hot
# statement 5 times before psycopg's default threshold prepares it (then 5
# custom plans more before the server settles on the generic one).
CONNECT_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}


def connect_kwargs(prepared_statements: bool) -> dict[str, Any]:
    """The keyword arguments of the savers' own connections.

    Args:
        prepared_statements: ``False`` turns server-side prepared statements
            off (``prepare_threshold=None``): a pooler in transaction mode
            (PgBouncer's ``pool_mode = transaction``, RDS Proxy, Supavisor)
            hands each transaction another server connection, where a
            statement prepared on the previous one does not exist.
    """
    if not isinstance(prepared_statements, bool):
        raise InvalidConfigError(
            field="prepared_statements",
            reason=f"expected True or False, got {prepared_statements!r}",
        )
    return {**CONNECT_KWARGS, "prepare_threshold": 0 if prepared_statements else None}


Rows = list[tuple[Any, ...]]
T = TypeVar("T")
# an I/O-free operation: yields statements, is sent their rows, returns its result (a T)
Op = Generator[Stmt, Rows | None, T]


def advance(op: Op[Any], rows: Rows | None) -> tuple[bool, Any]:
    """Send ``rows`` into ``op``: ``(False, next statement)`` or ``(True, its result)``.

    The shells loop on this instead of catching ``StopIteration`` around their
    ``with`` blocks: a pipeline block that exits on an exception logs and
    drops the errors of its last statements, so the end of an operation must
    leave the block normally.
    """
    try:
        return False, op.send(rows)
    except StopIteration as done:
        return True, done.value


CALLERS_TRANSACTION = (TransactionStatus.INTRANS, TransactionStatus.INERROR)
"""Where a connection is when an operation starts inside the caller's transaction."""
_TRANSACTION_CONTROL = frozenset((_sql.BEGIN, _sql.BEGIN_SNAPSHOT, _sql.COMMIT))


def within_callers_transaction(op: Op[Any]) -> Op[Any]:
    """``op`` in a transaction the caller opened: its own ``BEGIN`` and ``COMMIT`` left out.

    The caller commits or rolls back everything, this operation's writes
    included; a ``COMMIT`` of ours would commit the caller's own work. The
    shells run the operation in a savepoint, so one that fails leaves the
    caller's transaction as it was, and usable.
    """
    try:
        done, stmt = advance(op, None)
        while not done:
            rows = None if stmt.query in _TRANSACTION_CONTROL else (yield stmt)
            done, stmt = advance(op, rows)
        return stmt
    finally:
        op.close()


class _Queries:
    """The statements of one schema, rendered once."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        r = _sql.render
        self.setup_schema = r(_sql.SETUP_SCHEMA, schema)
        self.setup_prepare = r(_sql.SETUP_PREPARE, schema)
        self.setup_current = r(_sql.SETUP_CURRENT, schema)
        self.setup_record = r(_sql.SETUP_RECORD, schema)
        self.layout_version = r(_sql.LAYOUT_VERSION, schema)
        self.get_latest = r(_sql.GET_LATEST, schema)
        self.get_by_id = r(_sql.GET_BY_ID, schema)
        self.schema_version_latest = r(_sql.SCHEMA_VERSION_LATEST, schema)
        self.schema_version_by_id = r(_sql.SCHEMA_VERSION_BY_ID, schema)
        self.put = r(_sql.PUT, schema)
        self.put_writes_upsert = r(_sql.PUT_WRITES_UPSERT, schema)
        self.put_writes_insert = r(_sql.PUT_WRITES_INSERT, schema)
        self.delete_threads = r(_sql_threads.DELETE_THREADS, schema)
        self.delete_for_runs = r(_sql_threads.DELETE_FOR_RUNS, schema)
        self.copy_thread = r(_sql_threads.COPY_THREAD, schema)
        self.prune_heads = r(_sql_threads.PRUNE_HEADS, schema)
        self.prune_chain = r(_sql_threads.PRUNE_CHAIN, schema)
        self.prune_delete = r(_sql_threads.PRUNE_DELETE, schema)
        self.delta_history = r(_sql.DELTA_HISTORY, schema)
        self.value_chain = r(_sql.VALUE_CHAIN, schema)
        self.list_waits = r(_sql.LIST_WAITS, schema)
        self._lists: dict[tuple[str, ...], str] = {}

    def list_query(self, predicates: tuple[str, ...], limited: bool) -> str:
        key = (*predicates, "limit" if limited else "")
        query = self._lists.get(key)
        if query is None:
            where = " AND ".join(_sql.LIST_PREDICATES[p] for p in predicates)
            inner = _sql.LIST_INNER + (_sql.LIST_LIMIT if limited else "")
            query = _sql.render(
                _sql.LIST_TUPLES.replace("{inner}", inner),
                self.schema,
                where=f"WHERE {where}" if where else "",
            )
            self._lists[key] = query
        return query


MAX_KEY_BYTES = 1024
"""The most UTF-8 bytes of a thread id, namespace or decision/activity key a write stores.

Each is a column of btree indexes (the primary keys of the official tables, the
lease, decision and audit indexes), whose rows hold at most 2,704 bytes; at
1 KiB each, a thread id and a namespace fit beside the checkpoint, task and
channel ids of every index, whether or not the server can compress them."""


def key_to_store(field: str, value: Any) -> str:
    """:func:`check_id`, refusing what the PostgreSQL indexes cannot hold.

    Applied on writes only: a longer id already in the database (the server
    takes those it can compress into an index row) is still read, listed and
    deleted.

    Raises:
        InvalidConfigError: ``value`` is longer than :data:`MAX_KEY_BYTES`, or
            :func:`check_id` refuses it.
    """
    text = check_id(field, value)
    # a character is at most 4 bytes: short ids skip the encoding
    if len(text) * 4 > MAX_KEY_BYTES and len(text.encode("utf-8")) > MAX_KEY_BYTES:
        size = len(text.encode("utf-8"))
        raise InvalidConfigError(
            field=field,
            reason=f"{size} bytes of UTF-8; PostgreSQL stores at most {MAX_KEY_BYTES} "
            "(it is part of index keys, whose rows hold at most 2,704 bytes)",
        )
    return text


def _ids(config: RunnableConfig, *, write: bool = False) -> tuple[str, str, str | None]:
    conf = config.get("configurable") or {}
    if "thread_id" not in conf:
        raise InvalidConfigError(field="thread_id", reason="missing from config['configurable']")
    check = key_to_store if write else check_id
    thread_id = check("thread_id", conf["thread_id"])
    checkpoint_ns = check("checkpoint_ns", conf.get("checkpoint_ns") or "")
    checkpoint_id = conf.get("checkpoint_id")
    if checkpoint_id is not None:
        checkpoint_id = check_id("checkpoint_id", checkpoint_id)
    return thread_id, checkpoint_ns, checkpoint_id or None


def check_schema(schema: str) -> str:
    """``schema`` if it can name a PostgreSQL schema; else :class:`InvalidConfigError`."""
    if not isinstance(schema, str) or not schema or "\x00" in schema or len(schema) > 63:
        raise InvalidConfigError(field="schema", reason="must be a non-empty name of <= 63 chars")
    return schema
