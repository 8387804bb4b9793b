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


def sync_pool(conn_string: str, max_size: int, *, prepared_statements: bool) -> ConnectionPool:
    """An open-on-enter ``ConnectionPool`` for ``PostgresSaver.from_conn_string``."""
    idle = IdleConnections()

    def check(conn: Connection[Any]) -> None:
        if idle.due(conn):
            ConnectionPool.check_connection(conn)

    return ConnectionPool(
        conn_string,
        min_size=1,
        max_size=max_size,
        kwargs=connect_kwargs(prepared_statements),
        configure=idle.rested,
        reset=idle.rested,
        check=check,
        open=False,
    )


def async_pool(
    conn_string: str, max_size: int, *, prepared_statements: bool
) -> AsyncConnectionPool:
    """An open-on-enter ``AsyncConnectionPool`` for ``AsyncPostgresSaver.from_conn_string``."""
    idle = IdleConnections()

    async def check(conn: AsyncConnection[Any]) -> None:
        if idle.due(conn):
            await AsyncConnectionPool.check_connection(conn)

    async def rested(conn: AsyncConnection[Any]) -> None:
        idle.rested(conn)

    return AsyncConnectionPool(
        conn_string,
        min_size=1,
        max_size=max_size,
        kwargs=connect_kwargs(prepared_statements),
        configure=rested,
        reset=rested,
        check=check,
        open=False,
    )
