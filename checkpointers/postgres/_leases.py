"""Run leases in PostgreSQL: table ``durable_run_leases`` (layout step ``run_leases``).

Each operation is one statement, so each compare-and-set is atomic by itself.
:class:`LeaseQueries` builds the statements and parses rows without I/O;
:class:`PostgresLeaseStore` and :class:`AsyncPostgresLeaseStore` run them on a
psycopg connection or pool (autocommit, as the savers use).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, nullcontext
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql

from checkpointers._errors import StorageUnavailableError
from checkpointers._leases import (
    PARKED,
    RUNNING,
    LeaseCounts,
    LeaseRecord,
)

_COLS = (
    "thread_id, state, owner, token, acquired_at, renewed_at, expires_at, progress_at,"
    " progress, attempts, recoveries, last_error, reason, ended_at"
)

ACQUIRE = """
INSERT INTO {t} AS l (thread_id, state, owner, token, acquired_at, renewed_at, expires_at,
                      progress_at)
VALUES (%(thread_id)s, 'running', %(owner)s, 1, %(now)s, %(now)s, %(expires)s, %(now)s)
ON CONFLICT (thread_id) DO UPDATE SET
    state = 'running',
    owner = EXCLUDED.owner,
    token = CASE WHEN l.state = 'running' AND l.owner = EXCLUDED.owner
                 THEN l.token ELSE l.token + 1 END,
    acquired_at = CASE WHEN l.state = 'running' AND l.owner = EXCLUDED.owner
                       THEN l.acquired_at ELSE EXCLUDED.acquired_at END,
    renewed_at = EXCLUDED.renewed_at,
    expires_at = EXCLUDED.expires_at,
    progress_at = EXCLUDED.progress_at,
    reason = NULL,
    ended_at = NULL
WHERE l.state <> 'running' OR l.owner = EXCLUDED.owner OR l.expires_at <= EXCLUDED.acquired_at
RETURNING {cols}
"""

RENEW = """
UPDATE {t} AS l SET
    renewed_at = %(now)s,
    expires_at = %(expires)s,
    progress_at = COALESCE(p.progress_at, l.progress_at),
    progress = COALESCE(p.note, l.progress)
FROM unnest(%(ids)s::text[], %(progress_at)s::timestamptz[], %(notes)s::text[])
     AS p(thread_id, progress_at, note)
WHERE l.thread_id = p.thread_id AND l.state = 'running' AND l.owner = %(owner)s
RETURNING l.thread_id
"""

RELEASE = """
UPDATE {t} SET state = 'released', reason = %(reason)s, ended_at = %(now)s, attempts = 0,
    last_error = COALESCE(%(error)s, last_error)
WHERE thread_id = %(thread_id)s AND state = 'running' AND owner = %(owner)s
RETURNING thread_id
"""

RECORD_ERROR = """
UPDATE {t} SET last_error = %(error)s
WHERE thread_id = %(thread_id)s AND owner = %(owner)s
"""

FIND_EXPIRED = """
SELECT {cols} FROM {t}
WHERE state = 'running' AND expires_at <= %(now)s
ORDER BY expires_at LIMIT %(limit)s
"""

CLAIM = """
UPDATE {t} SET owner = %(owner)s, token = token + 1, attempts = attempts + 1,
    recoveries = recoveries + 1, acquired_at = %(now)s, renewed_at = %(now)s,
    expires_at = %(expires)s, progress_at = %(now)s, progress = NULL
WHERE thread_id = %(thread_id)s AND state = 'running' AND token = %(token)s
    AND expires_at <= %(now)s
RETURNING {cols}
"""

PARK = """
UPDATE {t} SET state = 'parked', reason = %(reason)s, ended_at = %(now)s
WHERE thread_id = %(thread_id)s AND state = 'running' AND token = %(token)s
    AND expires_at <= %(now)s
RETURNING {cols}
"""

UNPARK = """
UPDATE {t} SET state = 'released', attempts = 0, reason = 'unparked'
WHERE thread_id = %(thread_id)s AND state = 'parked'
RETURNING thread_id
"""

GET = "SELECT {cols} FROM {t} WHERE thread_id = %(thread_id)s"

LIST_RUNNING = """
SELECT {cols} FROM {t} WHERE state = 'running' ORDER BY expires_at LIMIT %(limit)s
"""

LIST_PARKED = """
SELECT {cols} FROM {t} WHERE state = 'parked' ORDER BY ended_at LIMIT %(limit)s
"""

COUNTS = """
SELECT
    (SELECT count(*) FROM {t} WHERE state = 'running' AND expires_at > %(now)s),
    (SELECT count(*) FROM {t} WHERE state = 'running' AND expires_at <= %(now)s),
    (SELECT count(*) FROM {t} WHERE state = 'parked')
"""

DELETE = "DELETE FROM {t} WHERE thread_id = %(thread_id)s"

Stmt = tuple[sql.Composed, dict[str, Any]]
Flow = Generator[Stmt, list[Any], Any]


def _record(row: Sequence[Any]) -> LeaseRecord:
    return LeaseRecord(
        thread_id=row[0], state=row[1], owner=row[2], token=int(row[3]), acquired_at=row[4],
        renewed_at=row[5], expires_at=row[6], progress_at=row[7], progress=row[8],
        attempts=int(row[9]), recoveries=int(row[10]), last_error=row[11], reason=row[12],
        ended_at=row[13],
    )


class LeaseQueries:
    """The lease statements of one schema, and every operation as a flow (no I/O).

    A flow yields ``(statement, params)``, receives the result rows, and
    returns the operation's result; the sync and async stores only run them.
    """

    def __init__(self, schema: str) -> None:
        table = sql.Identifier(schema, "durable_run_leases")
        cols = sql.SQL(_COLS)

        def render(text: str) -> sql.Composed:
            return sql.SQL(text).format(t=table, cols=cols)

        self.acquire_q = render(ACQUIRE)
        self.renew_q = render(RENEW)
        self.release_q = render(RELEASE)
        self.record_error_q = render(RECORD_ERROR)
        self.find_expired_q = render(FIND_EXPIRED)
        self.claim_q = render(CLAIM)
        self.park_q = render(PARK)
        self.unpark_q = render(UNPARK)
        self.get_q = render(GET)
        self.list_running_q = render(LIST_RUNNING)
        self.list_parked_q = render(LIST_PARKED)
        self.counts_q = render(COUNTS)
        self.delete_q = render(DELETE)

    def acquire(self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta) -> Flow:
        rows = yield self.acquire_q, {"thread_id": thread_id, "owner": owner, "now": now,
                                      "expires": now + ttl}
        return _record(rows[0]) if rows else None

    def renew(self, *, owner: str, thread_ids: Sequence[str], now: datetime, ttl: timedelta,
              progress: dict[str, tuple[datetime, str | None]] | None = None) -> Flow:
        if not thread_ids:
            return []
        progress = progress or {}
        rows = yield self.renew_q, {
            "owner": owner, "now": now, "expires": now + ttl, "ids": list(thread_ids),
            "progress_at": [progress[t][0] if t in progress else None for t in thread_ids],
            "notes": [progress[t][1] if t in progress else None for t in thread_ids],
        }
        kept = {r[0] for r in rows}
        return [t for t in thread_ids if t not in kept]

    def release(self, *, thread_id: str, owner: str, now: datetime, reason: str,
                error: str | None = None) -> Flow:
        rows = yield self.release_q, {"thread_id": thread_id, "owner": owner, "now": now,
                                      "reason": reason, "error": error}
        return bool(rows)

    def record_error(self, *, thread_id: str, owner: str, error: str) -> Flow:
        yield self.record_error_q, {"thread_id": thread_id, "owner": owner, "error": error}

    def find_expired(self, *, now: datetime, limit: int) -> Flow:
        rows = yield self.find_expired_q, {"now": now, "limit": limit}
        return [_record(r) for r in rows]

    def claim(self, *, thread_id: str, token: int, owner: str, now: datetime,
              ttl: timedelta) -> Flow:
        rows = yield self.claim_q, {"thread_id": thread_id, "token": token, "owner": owner,
                                    "now": now, "expires": now + ttl}
        return _record(rows[0]) if rows else None

    def park(self, *, thread_id: str, token: int, now: datetime, reason: str) -> Flow:
        rows = yield self.park_q, {"thread_id": thread_id, "token": token, "now": now,
                                   "reason": reason}
        return _record(rows[0]) if rows else None

    def unpark(self, *, thread_id: str) -> Flow:
        return bool((yield self.unpark_q, {"thread_id": thread_id}))

    def get(self, *, thread_id: str) -> Flow:
        rows = yield self.get_q, {"thread_id": thread_id}
        return _record(rows[0]) if rows else None

    def list(self, *, state: str, limit: int) -> Flow:
        if state not in (RUNNING, PARKED):
            raise ValueError(f"only running and parked leases are listed, not {state!r}")
        query = self.list_running_q if state == RUNNING else self.list_parked_q
        rows = yield query, {"limit": limit}
        return [_record(r) for r in rows]

    def counts(self, *, now: datetime) -> Flow:
        rows = yield self.counts_q, {"now": now}
        running, orphaned, parked = rows[0]
        return LeaseCounts(int(running), int(orphaned), int(parked))

    def delete(self, *, thread_id: str) -> Flow:
        yield self.delete_q, {"thread_id": thread_id}


def _translate(operation: str, exc: psycopg.OperationalError) -> StorageUnavailableError:
    return StorageUnavailableError(backend="postgres", operation=operation, reason=str(exc))


class PostgresLeaseStore:
    """:class:`~checkpointers._leases.LeaseStore` on a psycopg connection or pool.

    Args:
        conn: An autocommit ``psycopg.Connection`` or a ``psycopg_pool.ConnectionPool``.
        schema: The saver's schema.
        lock: Held around every statement when ``conn`` is a connection the
            saver shares between threads (the saver's own lock).
    """

    def __init__(self, conn: Any, schema: str = "public", lock: Any = None) -> None:
        self.conn = conn
        self.q = LeaseQueries(schema)
        self.lock = lock if lock is not None else nullcontext()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if isinstance(self.conn, psycopg.Connection):
            with self.lock:
                yield self.conn
        else:
            with self.conn.connection() as conn:
                yield conn

    def _run(self, operation: str, flow: Flow) -> Any:
        try:
            query, params = next(flow)
            with self._connection() as conn:
                with conn.cursor() as cur:
                    cur.execute(query, params)
                    rows = cur.fetchall() if cur.description is not None else []
                if not conn.autocommit:
                    conn.commit()
            flow.send(rows)
        except StopIteration as stop:
            return stop.value
        except psycopg.OperationalError as exc:
            raise _translate(operation, exc) from exc
        raise RuntimeError(f"lease operation {operation} made more than one statement")

    def acquire_lease(self, **kw: Any) -> LeaseRecord | None:
        return self._run("acquire_lease", self.q.acquire(**kw))  # type: ignore[no-any-return]

    def renew_leases(self, **kw: Any) -> list[str]:
        return self._run("renew_leases", self.q.renew(**kw))  # type: ignore[no-any-return]

    def release_lease(self, **kw: Any) -> bool:
        return self._run("release_lease", self.q.release(**kw))  # type: ignore[no-any-return]

    def record_lease_error(self, **kw: Any) -> None:
        self._run("record_lease_error", self.q.record_error(**kw))

    def find_expired_leases(self, **kw: Any) -> list[LeaseRecord]:
        return self._run("find_expired_leases", self.q.find_expired(**kw))  # type: ignore[no-any-return]

    def claim_expired_lease(self, **kw: Any) -> LeaseRecord | None:
        return self._run("claim_expired_lease", self.q.claim(**kw))  # type: ignore[no-any-return]

    def park_lease(self, **kw: Any) -> LeaseRecord | None:
        return self._run("park_lease", self.q.park(**kw))  # type: ignore[no-any-return]

    def unpark_lease(self, **kw: Any) -> bool:
        return self._run("unpark_lease", self.q.unpark(**kw))  # type: ignore[no-any-return]

    def get_lease(self, **kw: Any) -> LeaseRecord | None:
        return self._run("get_lease", self.q.get(**kw))  # type: ignore[no-any-return]

    def list_leases(self, **kw: Any) -> list[LeaseRecord]:
        return self._run("list_leases", self.q.list(**kw))  # type: ignore[no-any-return]

    def lease_counts(self, **kw: Any) -> LeaseCounts:
        return self._run("lease_counts", self.q.counts(**kw))  # type: ignore[no-any-return]

    def delete_lease(self, **kw: Any) -> None:
        self._run("delete_lease", self.q.delete(**kw))


class AsyncPostgresLeaseStore:
    """:class:`~checkpointers._leases.AsyncLeaseStore` on an async connection or pool."""

    def __init__(self, conn: Any, schema: str = "public", lock: Any = None) -> None:
        self.conn = conn
        self.q = LeaseQueries(schema)
        self.lock = lock if lock is not None else nullcontext()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if isinstance(self.conn, psycopg.AsyncConnection):
            async with self.lock:
                yield self.conn
        else:
            async with self.conn.connection() as conn:
                yield conn

    async def _run(self, operation: str, flow: Flow) -> Any:
        try:
            query, params = next(flow)
            async with self._connection() as conn:
                async with conn.cursor() as cur:
                    await cur.execute(query, params)
                    rows = await cur.fetchall() if cur.description is not None else []
                if not conn.autocommit:
                    await conn.commit()
            flow.send(rows)
        except StopIteration as stop:
            return stop.value
        except psycopg.OperationalError as exc:
            raise _translate(operation, exc) from exc
        raise RuntimeError(f"lease operation {operation} made more than one statement")

    async def aacquire_lease(self, **kw: Any) -> LeaseRecord | None:
        return await self._run("acquire_lease", self.q.acquire(**kw))  # type: ignore[no-any-return]

    async def arenew_leases(self, **kw: Any) -> list[str]:
        return await self._run("renew_leases", self.q.renew(**kw))  # type: ignore[no-any-return]

    async def arelease_lease(self, **kw: Any) -> bool:
        return await self._run("release_lease", self.q.release(**kw))  # type: ignore[no-any-return]

    async def arecord_lease_error(self, **kw: Any) -> None:
        await self._run("record_lease_error", self.q.record_error(**kw))

    async def afind_expired_leases(self, **kw: Any) -> list[LeaseRecord]:
        return await self._run("find_expired_leases", self.q.find_expired(**kw))  # type: ignore[no-any-return]

    async def aclaim_expired_lease(self, **kw: Any) -> LeaseRecord | None:
        return await self._run("claim_expired_lease", self.q.claim(**kw))  # type: ignore[no-any-return]

    async def apark_lease(self, **kw: Any) -> LeaseRecord | None:
        return await self._run("park_lease", self.q.park(**kw))  # type: ignore[no-any-return]

    async def aunpark_lease(self, **kw: Any) -> bool:
        return await self._run("unpark_lease", self.q.unpark(**kw))  # type: ignore[no-any-return]

    async def aget_lease(self, **kw: Any) -> LeaseRecord | None:
        return await self._run("get_lease", self.q.get(**kw))  # type: ignore[no-any-return]

    async def alist_leases(self, **kw: Any) -> list[LeaseRecord]:
        return await self._run("list_leases", self.q.list(**kw))  # type: ignore[no-any-return]

    async def alease_counts(self, **kw: Any) -> LeaseCounts:
        return await self._run("lease_counts", self.q.counts(**kw))  # type: ignore[no-any-return]

    async def adelete_lease(self, **kw: Any) -> None:
        await self._run("delete_lease", self.q.delete(**kw))
