"""Every address form libpq and redis-py take works on the command line, with ?schema=/?prefix=.

libpq URLs (``postgresql://``, ``postgres://``, ``?host=`` socket folders,
percent-encoded socket hosts, ``?password=``) and keyword DSNs; redis-py's
``redis://`` (default and ACL user), ``rediss://`` (TLS) and ``unix://`` (with
``?db=`` and a password). For each, the commands set up and read the saver's
namespace the URL names, and a saver opened without the CLI, on the same
server, database and namespace, finds what the CLI's processes wrote there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import redis

from langgraph_durable.checkpointers import LayoutVersionError
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts._demo import run_agent
from tests._cli_support import run_cli
from tests._protected_servers import (
    ACL_PASSWORD,
    ACL_USER,
    PG_PASSWORD,
    REDIS_PASSWORD,
    ProtectedPostgres,
    ProtectedRedis,
    dsn_quote,
    enc,
)
from tests._servers import free_port, tls_redis_server_binary
from tests.redis._own_server import OwnRedis


def _with(url: str, param: str, name: str) -> str:
    if "://" not in url:
        return f"{url} {param}={dsn_quote(name)}"
    return f"{url}{'&' if '?' in url else '?'}{param}={enc(name)}"


def _pg_saver_finds(pg: ProtectedPostgres, schema: str, thread: str) -> bool:
    with psycopg.connect(
        host="127.0.0.1",
        port=pg.server.port,
        user="postgres",
        password=PG_PASSWORD,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        saver = PostgresSaver(conn, schema=schema)
        try:
            return saver.get_tuple({"configurable": {"thread_id": thread}}) is not None
        except LayoutVersionError:  # nothing set up in that schema: nothing there either
            return False


def _redis_saver_finds(client: redis.Redis, prefix: str, thread: str) -> bool:
    try:
        saver = RedisSaver(client, prefix=prefix)
        return saver.get_tuple({"configurable": {"thread_id": thread}}) is not None
    finally:
        client.close()


def _round_trip(capsys: pytest.CaptureFixture[str], url: str, thread: str) -> None:
    """setup, a run that pauses (the demo's agent), inspect and status: all through ``url``."""
    assert run_cli(capsys, "setup", "--url", url).code == 0
    capsys.readouterr()
    assert run_agent(url, thread) == 0
    shown = run_cli(capsys, "inspect", thread, "--url", url)
    assert shown.code == 0, shown
    assert "state: waiting for approval until" in shown.out
    status = run_cli(capsys, "status", "--url", url)
    assert status.code == 0, status
    assert "approvals: 1 waiting, 0 overdue" in status.out


PG_FORMS = ["url", "dsn", "query", "host_query", "encoded_socket", "socket_dsn"]


@pytest.mark.parametrize("form", PG_FORMS)
def test_postgres_forms(
    form: str, capsys: pytest.CaptureFixture[str], protected_postgres: ProtectedPostgres
) -> None:
    schema = f"f_{form}_{uuid.uuid4().hex[:6]}"
    url = _with(protected_postgres.forms()[form], "schema", schema)
    _round_trip(capsys, url, "t-form")
    assert _pg_saver_finds(protected_postgres, schema, "t-form")
    assert not _pg_saver_finds(protected_postgres, "public", "t-form")


def _redis_client(rd: ProtectedRedis, form: str) -> redis.Redis:
    if form == "acl_user":
        return redis.Redis(port=rd.server.port, username=ACL_USER, password=ACL_PASSWORD)
    if form.startswith("unix"):
        db = 2 if form == "unix" else 3  # what the forms' ?db= say
        return redis.Redis(unix_socket_path=rd.socket, db=db, password=REDIS_PASSWORD)
    return redis.Redis(port=rd.server.port, password=REDIS_PASSWORD)


@pytest.mark.parametrize("form", ["default_user", "acl_user", "unix", "unix_query"])
def test_redis_forms(
    form: str, capsys: pytest.CaptureFixture[str], protected_redis: ProtectedRedis
) -> None:
    prefix = f"f-{form}-{uuid.uuid4().hex[:6]}"
    url = _with(protected_redis.forms()[form], "prefix", prefix)
    _round_trip(capsys, url, "t-form")
    assert _redis_saver_finds(_redis_client(protected_redis, form), prefix, "t-form")
    assert not _redis_saver_finds(_redis_client(protected_redis, form), "lgd", "t-form")


OPENSSL_REQ = [
    "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
]  # fmt: skip


@pytest.fixture(scope="module")
def tls_redis() -> Iterator[tuple[OwnRedis, int, str]]:
    """``(server, TLS port, CA file)``: a redis-server that also speaks TLS."""
    certs = tempfile.mkdtemp(prefix="lgd-tls-")
    key, cert = os.path.join(certs, "key.pem"), os.path.join(certs, "cert.pem")
    subprocess.run(
        [*OPENSSL_REQ, "-keyout", key, "-out", cert],
        check=True,
        capture_output=True,
    )
    os.chmod(key, 0o644)
    tls_port = free_port()
    server = OwnRedis(
        binary=tls_redis_server_binary(),
        password=REDIS_PASSWORD,
        args=[
            "--save",
            "",
            "--appendonly",
            "no",
            "--tls-port",
            str(tls_port),
            "--tls-cert-file",
            cert,
            "--tls-key-file",
            key,
            "--tls-ca-cert-file",
            cert,
            "--tls-auth-clients",
            "no",
        ],
    ).start()
    yield server, tls_port, cert
    server.remove()
    shutil.rmtree(certs, ignore_errors=True)


def test_rediss(capsys: pytest.CaptureFixture[str], tls_redis: tuple[OwnRedis, int, str]) -> None:
    server, tls_port, ca = tls_redis
    prefix = f"f-tls-{uuid.uuid4().hex[:6]}"
    url = f"rediss://:{enc(REDIS_PASSWORD)}@127.0.0.1:{tls_port}/0?ssl_ca_certs={ca}"
    _round_trip(capsys, _with(url, "prefix", prefix), "t-tls")
    client: Any = redis.Redis(port=server.port, password=REDIS_PASSWORD)  # the plain port
    assert _redis_saver_finds(client, prefix, "t-tls")


def test_unix_url_through_the_script(protected_redis: ProtectedRedis) -> None:
    # the form that was mangled to unix:/path: the real script, end to end
    url = _with(protected_redis.forms()["unix_query"], "prefix", f"f-script-{uuid.uuid4().hex[:6]}")
    cli = [sys.executable, "-m", "langgraph_durable.interrupts.cli"]
    for args in (["setup"], ["status"]):
        done = subprocess.run(
            [*cli, *args, "--url", url], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
    assert "unix:///" in done.stdout
