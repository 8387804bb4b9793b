# Generated from checkpointers/postgres/_runner_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The runner of the asyncio PostgreSQL saver and of its feature stores.

Every operation of the Postgres backend is an I/O-free generator (``Op[T]``,
:mod:`._stmt`) that yields statements and is sent their rows. The runner is
what executes them: it takes the connection (or one of the pool's), drives the
generator with psycopg, and translates driver errors into the library's
(:mod:`._errors`). The saver and each of its stores hold the same runner, so
they share its connection, its lock and its event loop and nothing else.

The sync runner (:mod:`._runner`) is generated from this module by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import Connection, pq
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers.postgres._errors import database_of, translate
from langgraph_durable.checkpointers.postgres._stmt import (
    CALLERS_TRANSACTION,
    Op,
    advance,
    within_callers_transaction,
)

T = TypeVar("T")


def drive(conn: Connection[Any], op: Op[T]) -> T:
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
        result: T = value  # what the operation returned (advance hands it back as Any)
        return result
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


def drive_together(conn: Connection[Any], ops: list[Op[Any]]) -> list[Any]:
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


def _drive_rounds(conn: Connection[Any], ops: list[Op[Any]]) -> list[Any]:
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
            rows = cur.fetchall() if pending[i].fetch else None
            done, value = advance(ops[i], rows)
            if done:
                results[i] = value
            else:
                following[i] = value
        pending = following
    return results


class PostgresRunner:
    """Runs core operations on one connection (under a lock) or on a pool.

    Args:
        conn: A psycopg ``Connection`` (one call at a time) or a pool
            (``ConnectionPool``).
        schema: The schema the operations work in (named by translated errors).
    """

    def __init__(self, conn: Connection[Any] | ConnectionPool[Any], schema: str) -> None:
        self.conn = conn
        self.schema = schema
        self._lock = threading.Lock()

    @contextmanager
    def connection(self) -> Iterator[Connection[Any]]:
        """The pool's next connection, or the one connection under the lock."""
        if isinstance(self.conn, ConnectionPool):
            with self.conn.connection() as conn:
                yield conn
        else:
            with self._lock:
                yield self.conn

    def run(self, operation: str, op: Op[T]) -> T:
        """Run ``op``; a driver error becomes the library's, naming ``operation``."""
        used: Connection[Any] | None = None
        try:
            with self.connection() as conn:
                used = conn
                return drive(conn, op)
        except psycopg.Error as exc:
            raise translate(exc, operation, self.schema, database_of(used)) from exc

    def run_together(self, operation: str, ops: list[Op[Any]]) -> list[Any]:
        """Run ``ops`` side by side in one pipeline and one transaction; their results."""
        used: Connection[Any] | None = None
        try:
            with self.connection() as conn:
                used = conn
                return drive_together(conn, ops)
        except psycopg.Error as exc:
            raise translate(exc, operation, self.schema, database_of(used)) from exc
