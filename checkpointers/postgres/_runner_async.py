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

import asyncio
import contextlib

# sync-only: import threading
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, pq
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from langgraph_durable.checkpointers.postgres._errors import database_of, translate
from langgraph_durable.checkpointers.postgres._stmt import (
    CALLERS_TRANSACTION,
    Op,
    advance,
    within_callers_transaction,
)

T = TypeVar("T")


async def adrive(conn: AsyncConnection[Any], op: Op[T]) -> T:
    """Run one core operation on ``conn``; return its result.

    Rows are read as tuples whatever row factory the caller's connection has;
    on a connection the caller put in pipeline mode, the operation runs in a
    nested pipeline block, whose exit syncs: every statement was applied (or
    raised) before this returns. In a transaction the caller opened, the
    operation runs in a savepoint of it and commits nothing (the caller does).
    """
    outer = False
    try:
        async with _synced_if_pipelined(conn) as pipeline:
            outer = await _in_callers_transaction(conn, pipeline)
            async with conn.transaction() if outer else contextlib.nullcontext():
                run = within_callers_transaction(op) if outer else op
                done, value = advance(run, None)
                while not done:
                    # a cursor per statement: in pipeline mode a result that
                    # arrives late is set on the cursor of its own statement,
                    # never read as the result of a later one
                    cur = conn.cursor(row_factory=tuple_row)
                    await cur.execute(
                        value.query, value.params, prepare=value.prepare_as, binary=value.fetch
                    )
                    done, value = advance(run, await cur.fetchall() if value.fetch else None)
        if not outer and not conn.autocommit:
            await conn.commit()
        result: T = value  # what the operation returned (advance hands it back as Any)
        return result
    except BaseException:
        op.close()
        await _roll_back_ours(conn, outer)
        raise


def _synced_if_pipelined(conn: AsyncConnection[Any]) -> AbstractAsyncContextManager[Any]:
    if conn.pgconn.pipeline_status == pq.PipelineStatus.OFF:
        return contextlib.nullcontext()
    return conn.pipeline()


async def _in_callers_transaction(conn: AsyncConnection[Any], pipeline: Any) -> bool:
    """Whether ``conn`` is in a transaction the caller opened (explicitly or implicitly)."""
    if pipeline is not None and conn.info.transaction_status == TransactionStatus.ACTIVE:
        await pipeline.sync()  # the caller's own statements are queued: learn where they left it
    return conn.info.transaction_status in CALLERS_TRANSACTION


async def _roll_back_ours(conn: AsyncConnection[Any], outer: bool) -> None:
    """After a failure: roll back the transaction the operation opened (not the caller's)."""
    if not outer and conn.info.transaction_status in CALLERS_TRANSACTION:
        # if the connection is gone, the pool or the caller replaces it
        with contextlib.suppress(psycopg.Error):
            await conn.rollback()


async def adrive_together(conn: AsyncConnection[Any], ops: list[Op[Any]]) -> list[Any]:
    """Run several core operations on ``conn`` in one pipeline; return their results.

    Each round sends the next statement of every unfinished operation before
    reading any reply, so independent operations (a run's lease and its
    checkpoint) cost one round trip together. Statements up to a sync form
    one implicit transaction: if one fails, none of them is applied. In a
    transaction the caller opened, as :func:`adrive`.
    """
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


async def _drive_rounds(conn: AsyncConnection[Any], ops: list[Op[Any]]) -> list[Any]:
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


class AsyncPostgresRunner:
    """Runs core operations on one connection (under a lock) or on a pool.

    Args:
        conn: A psycopg ``AsyncConnection`` (one call at a time) or a pool
            (``AsyncConnectionPool``).
        schema: The schema the operations work in (named by translated errors).
    """

    def __init__(self, conn: AsyncConnection[Any] | AsyncConnectionPool[Any], schema: str) -> None:
        self.conn = conn
        self.schema = schema
        # created on first use, in the event loop that uses it  # async-only
        self._lock: asyncio.Lock | None = None  # async-only
        # sync-only: self._lock = threading.Lock()
        # the loop of the last call: where the bridge sends coroutines  # async-only
        self._loop: asyncio.AbstractEventLoop | None = None  # async-only

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """The pool's next connection, or the one connection under the lock."""
        if isinstance(self.conn, AsyncConnectionPool):
            async with self.conn.connection() as conn:
                yield conn
        else:
            if self._lock is None:  # async-only
                self._lock = asyncio.Lock()  # async-only
            async with self._lock:
                yield self.conn

    async def run(self, operation: str, op: Op[T]) -> T:
        """Run ``op``; a driver error becomes the library's, naming ``operation``."""
        self._loop = asyncio.get_running_loop()  # async-only
        used: AsyncConnection[Any] | None = None
        try:
            async with self.connection() as conn:
                used = conn
                return await adrive(conn, op)
        except psycopg.Error as exc:
            raise translate(exc, operation, self.schema, database_of(used)) from exc

    async def run_together(self, operation: str, ops: list[Op[Any]]) -> list[Any]:
        """Run ``ops`` side by side in one pipeline and one transaction; their results."""
        self._loop = asyncio.get_running_loop()  # async-only
        used: AsyncConnection[Any] | None = None
        try:
            async with self.connection() as conn:
                used = conn
                return await adrive_together(conn, ops)
        except psycopg.Error as exc:
            raise translate(exc, operation, self.schema, database_of(used)) from exc

    def blocking(self, coro: Coroutine[Any, Any, T]) -> T:  # async-only
        """Run ``coro`` on the loop of the runner's calls, from another thread; its result."""
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
