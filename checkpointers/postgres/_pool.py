"""The savers' own connection pools: a check of connections that sat idle.

A proxy or load balancer (PgBouncer's ``server_idle_timeout``, RDS Proxy,
Cloud SQL, a NAT) closes a connection that was idle for a while, and the pool
only learns it when the next call fails on it. psycopg_pool's ``check``
callback pings a connection at checkout; pinging every checkout would add a
round trip to every call (the hot paths are one statement each), so only a
connection idle for :data:`CHECK_IDLE_AFTER` seconds or more is pinged: the
first call after an idle period, never the calls of a running graph.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers.postgres._stmt import connect_kwargs

DEFAULT_POOL_SIZE = 4
"""Connections ``from_conn_string`` opens at most by default (one while idle).

Each graph step commits, and a commit waits for its WAL flush; on one
connection concurrent runs queue behind each other's flushes, on a few the
server flushes their commits together. Measured with 20 concurrent threads
(``benchmarks/bench_defaults.py``): a graph run on 4 pooled connections took
about half the time of one connection; one thread at a time, the same.
"""

# Proxies drop idle connections after minutes; a second keeps a running
# graph's calls (milliseconds apart) unpinged at the cost of at most one ping
# per connection per second.
CHECK_IDLE_AFTER = 1.0


class IdleConnections:
    """When each pooled connection was last handed back (I/O-free bookkeeping).

    Args:
        after: Seconds of idleness from which a connection is pinged at checkout.
    """

    def __init__(self, after: float = CHECK_IDLE_AFTER) -> None:
        self.after = after
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    def due(self, conn: Any) -> bool:
        """Whether ``conn`` has been idle long enough to be pinged before use."""
        returned = self._returned.get(conn)
        return returned is None or time.monotonic() - returned >= self.after

    def rested(self, conn: Any) -> None:
        """Note that ``conn`` was just connected or handed back to the pool."""
        self._returned[conn] = time.monotonic()


class _SyncPool(ConnectionPool[Connection[Any]]):
    """A ``ConnectionPool`` that notes when each connection is handed back."""

    idle: IdleConnections

    def putconn(self, conn: Connection[Any]) -> None:
        # here, not in a reset callback: with one, the pool hands connections
        # back through its worker, and a call right after waits for it
        self.idle.rested(conn)
        super().putconn(conn)


class _AsyncPool(AsyncConnectionPool[AsyncConnection[Any]]):
    """An ``AsyncConnectionPool`` that notes when each connection is handed back."""

    idle: IdleConnections

    async def putconn(self, conn: AsyncConnection[Any]) -> None:
        self.idle.rested(conn)
        await super().putconn(conn)


def sync_pool(
    conn_string: str, max_size: int, *, prepared_statements: bool
) -> ConnectionPool[Connection[Any]]:
    """An open-on-enter ``ConnectionPool`` for ``PostgresSaver.from_conn_string``."""
    idle = IdleConnections()

    def check(conn: Connection[Any]) -> None:
        if idle.due(conn):
            ConnectionPool.check_connection(conn)

    pool = _SyncPool(
        conn_string,
        min_size=1,
        max_size=max_size,
        kwargs=connect_kwargs(prepared_statements),
        configure=idle.rested,
        check=check,
        open=False,
    )
    pool.idle = idle
    return pool


def async_pool(
    conn_string: str, max_size: int, *, prepared_statements: bool
) -> AsyncConnectionPool[AsyncConnection[Any]]:
    """An open-on-enter ``AsyncConnectionPool`` for ``AsyncPostgresSaver.from_conn_string``."""
    idle = IdleConnections()

    async def check(conn: AsyncConnection[Any]) -> None:
        if idle.due(conn):
            await AsyncConnectionPool.check_connection(conn)

    async def connected(conn: AsyncConnection[Any]) -> None:
        idle.rested(conn)

    pool = _AsyncPool(
        conn_string,
        min_size=1,
        max_size=max_size,
        kwargs=connect_kwargs(prepared_statements),
        configure=connected,
        check=check,
        open=False,
    )
    pool.idle = idle
    return pool
