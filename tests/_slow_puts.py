"""Make a saver's checkpoint puts slow in a real way, and open savers of every kind by name.

* PostgreSQL: another connection holds ``LOCK TABLE <schema>.checkpoints IN
  EXCLUSIVE MODE``: inserts wait, reads go on.
* Redis: ``CLIENT PAUSE <ms> WRITE`` on a redis-server of the test's own (never
  the shared one): write commands and scripts wait, plain reads go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from tests._saga_savers import _with_search_path
from tests.redis._own_server import OwnRedis

SYNC_KINDS = ("postgres-sync", "langgraph-postgres", "redis-sync")
ASYNC_KINDS = ("postgres-async", "redis-async")


class PgCheckpointsLock:
    """A lock on ``<schema>.checkpoints`` that makes every checkpoint insert wait."""

    def __init__(self, url: str, schema: str) -> None:
        self.url = url
        self.schema = schema
        self.conn: psycopg.Connection[Any] | None = None

    def take(self) -> None:
        self.conn = psycopg.connect(self.url)
        self.conn.execute(
            sql.SQL("LOCK TABLE {}.checkpoints IN EXCLUSIVE MODE").format(
                sql.Identifier(self.schema)
            )
        )

    def blocked_pids(self) -> list[int]:
        """The backends waiting for the lock (the puts it holds up)."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE NOT l.granted AND c.relname = 'checkpoints' AND n.nspname = %s",
                (self.schema,),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def terminate_blocked(self) -> None:
        """End the backends of the held-up puts (their client is gone: the puts are lost)."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            for pid in self.blocked_pids():
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))

    def release(self) -> None:
        if self.conn is not None:
            self.conn.rollback()
            self.conn.close()
            self.conn = None


class SlowPuts:
    """Slows the puts of one saver kind's storage from :meth:`start` for ``seconds``.

    Attributes:
        until: a ``time.monotonic()`` before which puts are held (set by :meth:`start`):
            taken before the pause is set going, so they go through again at ``until``
            or later, however late this process gets back to the clock.
    """

    def __init__(self, kind: str, url: str, area: str, seconds: float) -> None:
        self.kind, self.url, self.area, self.seconds = kind, url, area, seconds
        self.until = 0.0
        self._lock = PgCheckpointsLock(url, area) if not kind.startswith("redis") else None

    def start(self) -> None:
        if self._lock is not None:
            self._lock.take()
            self.until = time.monotonic() + self.seconds
            threading.Timer(self.seconds, self._lock.release).start()
        else:
            client = redis.Redis.from_url(self.url)
            self.until = time.monotonic() + self.seconds
            client.execute_command("CLIENT", "PAUSE", int(self.seconds * 1000), "WRITE")
            client.close()


@pytest.fixture(scope="module", name="own_redis_url")
def own_redis_url_fixture() -> Iterator[str]:
    """A redis-server of the module's own: pausing its clients disturbs no other test."""
    server = OwnRedis()
    server.start()
    yield server.url
    server.remove()


def storage(kind: str, request: Any, own_redis_url: str) -> tuple[str, str]:
    """``(url, area)`` for ``kind``: a Postgres schema or database, or a prefix on our own Redis."""
    if kind == "langgraph-postgres":
        return request.getfixturevalue("pg_database"), "public"
    if kind.startswith("postgres"):
        url, schema = request.getfixturevalue("pg_schema")
        return url, schema
    return own_redis_url, f"t{abs(hash(request.node.nodeid)) % 10**10}"


@contextmanager
def open_sync(kind: str, url: str, area: str) -> Iterator[Any]:
    """A set-up sync saver of ``kind``."""
    if kind == "langgraph-postgres":
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        # a pool, as in production: a read does not queue behind a put on one connection
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        with ConnectionPool(
            _with_search_path(url, area), max_size=4, kwargs=kwargs, open=True
        ) as pool:
            official = PostgresSaver(pool)  # type: ignore[arg-type]
            official.setup()
            yield official
    elif kind == "postgres-sync":
        from langgraph_durable.checkpointers.postgres import PostgresSaver as Ours

        with Ours.from_conn_string(url, schema=area) as ours:
            ours.setup()
            yield ours
    else:
        from langgraph_durable.checkpointers.redis import RedisSaver

        with RedisSaver.from_conn_string(url, prefix=area) as rsaver:
            rsaver.setup()
            yield rsaver


@asynccontextmanager
async def open_async(kind: str, url: str, area: str) -> AsyncIterator[Any]:
    """A set-up asyncio saver of ``kind``."""
    if kind == "postgres-async":
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url, schema=area) as ours:
            await ours.setup()
            yield ours
    else:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(url, prefix=area) as rsaver:
            await rsaver.setup()
            yield rsaver
