"""All four savers validate ``migrations=`` when constructed: a gap fails at startup."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import redis
import redis.asyncio as aredis

from langgraph_durable.checkpointers import InvalidConfigError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.migrations import MigrationChainError, StateMigrations


def _gap() -> StateMigrations:
    m = StateMigrations(version=3)
    m.upgrade(from_version=0)(lambda v: v)
    m.upgrade(from_version=2)(lambda v: v)
    return m


async def _construct(kind: str, pg_url: str, redis_url: str, migrations: Any) -> None:
    if kind == "postgres":
        with psycopg.Connection.connect(pg_url, autocommit=True) as conn:
            PostgresSaver(conn, migrations=migrations)
    elif kind == "async-postgres":
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as aconn:
            AsyncPostgresSaver(aconn, migrations=migrations)
    elif kind == "redis":
        RedisSaver(redis.Redis.from_url(redis_url), migrations=migrations)
    else:
        AsyncRedisSaver(aredis.Redis.from_url(redis_url), migrations=migrations)


@pytest.mark.parametrize("kind", ["postgres", "async-postgres", "redis", "async-redis"])
async def test_gap_and_wrong_type_fail_at_construction(
    kind: str, pg_server_url: str, redis_server_url: str
) -> None:
    with pytest.raises(MigrationChainError, match=r"no step from version\(s\) \[1\]"):
        await _construct(kind, pg_server_url, redis_server_url, _gap())
    with pytest.raises(InvalidConfigError, match="migrations"):
        await _construct(kind, pg_server_url, redis_server_url, {"version": 2})
    ok = StateMigrations(version=1)
    await _construct(kind, pg_server_url, redis_server_url, ok)
    with pytest.raises(MigrationChainError, match="before the first saver"):
        ok.upgrade(from_version=0)(lambda v: v)  # frozen by the saver
