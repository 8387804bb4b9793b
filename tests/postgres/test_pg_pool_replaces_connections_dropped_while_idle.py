"""The first call after an idle period succeeds though the server dropped the pool's connections.

Proxies and load balancers (RDS Proxy, Cloud SQL, PgBouncer's idle timeouts, a
NAT) close connections that sat idle; here the server terminates the pool's
backends (found by their ``application_name``) while the saver is idle, and
the next call must not fail: the pool pings a connection idle for
:data:`CHECK_IDLE_AFTER` seconds or more before handing it out.
"""

from __future__ import annotations

import time
import uuid
from urllib.parse import urlencode, urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.postgres._pool import CHECK_IDLE_AFTER, IdleConnections

BACKENDS_OF = "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
TERMINATE = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s"


def _named(url: str, name: str) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&" if parts.query else ""
    return urlunsplit(parts._replace(query=query + urlencode({"application_name": name})))


def _drop_backends(server_url: str, name: str) -> int:
    """Terminate every backend named ``name``; return how many there were, once all are gone."""
    with psycopg.connect(server_url, autocommit=True) as admin:
        dropped = len(admin.execute(TERMINATE, (name,)).fetchall())
        deadline = time.monotonic() + 30
        while admin.execute(BACKENDS_OF, (name,)).fetchall():
            assert time.monotonic() < deadline, "terminated backends did not go away"
            time.sleep(0.02)
    return dropped


def _idle_past_the_check(since: float) -> None:
    # the connections must have been idle long enough to be checked, as after
    # any real idle period (proxies drop connections after minutes)
    time.sleep(max(0.0, CHECK_IDLE_AFTER + 0.05 - (time.monotonic() - since)))


CONFIG = {"configurable": {"thread_id": "idle", "checkpoint_ns": ""}}


def test_sync_pool_survives_connections_dropped_while_idle(pg_schema) -> None:
    url, schema = pg_schema
    name = f"lgd-idle-{uuid.uuid4().hex[:10]}"
    with PostgresSaver.from_conn_string(_named(url, name), schema=schema, pool_size=3) as saver:
        saver.setup()
        saver.put(CONFIG, empty_checkpoint(), {"step": 1}, {})
        last_used = time.monotonic()
        assert _drop_backends(url, name) >= 1
        _idle_past_the_check(last_used)
        tup = saver.get_tuple(CONFIG)
        assert tup is not None and tup.metadata["step"] == 1
        saver.put(CONFIG, empty_checkpoint(), {"step": 2}, {})
        assert saver.get_tuple(CONFIG).metadata["step"] == 2


async def test_async_pool_survives_connections_dropped_while_idle(pg_schema) -> None:
    url, schema = pg_schema
    name = f"lgd-idle-{uuid.uuid4().hex[:10]}"
    async with AsyncPostgresSaver.from_conn_string(
        _named(url, name), schema=schema, pool_size=3
    ) as saver:
        await saver.setup()
        await saver.aput(CONFIG, empty_checkpoint(), {"step": 1}, {})
        last_used = time.monotonic()
        assert _drop_backends(url, name) >= 1
        _idle_past_the_check(last_used)
        tup = await saver.aget_tuple(CONFIG)
        assert tup is not None and tup.metadata["step"] == 1
        await saver.aput(CONFIG, empty_checkpoint(), {"step": 2}, {})
        assert (await saver.aget_tuple(CONFIG)).metadata["step"] == 2


def test_only_connections_idle_long_enough_are_pinged() -> None:
    """A running graph's calls (milliseconds apart) cost no extra round trip."""
    idle = IdleConnections(after=60.0)

    class Conn:  # any object the pool hands out (weakly referenced)
        pass

    conn = Conn()
    assert idle.due(conn)  # never seen: pinged
    idle.rested(conn)
    assert not idle.due(conn)  # just handed back: used as is
    idle.after = 0.0
    assert idle.due(conn)
