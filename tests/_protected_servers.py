"""Servers of the tests' own that require a password, and the addresses that reach them.

Each address form the command line takes (libpq URL, keyword DSN, query
parameter, socket folder; redis-py's default user, ACL user, unix socket) is
built here from one server and one password, so a test can try every form.
Passwords hold the characters that need care in each form: ``%`` ``@`` ``/``
``?`` ``#`` (percent-encoded in URLs), a space and a quote (quoted in a DSN).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote

from tests._own_postgres import OwnPostgres
from tests.redis._own_server import OwnRedis

PG_PASSWORD = "s3cr%t p@ss'w/rd?#"
REDIS_PASSWORD = "s3cr%t:p@ss/w?rd#x"  # redis-server's config takes no space or quote here
ACL_USER = "alice"
ACL_PASSWORD = "alice-Pw-7c1e"


def enc(value: str) -> str:
    """``value`` percent-encoded for any part of a URL."""
    return quote(value, safe="")


def dsn_quote(value: str) -> str:
    """``value`` as a single-quoted libpq DSN value."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def pg_forms(port: int, password: str, socket_dir: str | None = None) -> dict[str, str]:
    """Every address form that reaches the Postgres on ``port`` with ``password``.

    With ``socket_dir``, also the forms that reach it through its unix socket.
    """
    forms = {
        "url": f"postgresql://postgres:{enc(password)}@127.0.0.1:{port}/postgres",
        "dsn": f"host=127.0.0.1 port={port} user=postgres password={dsn_quote(password)} "
        "dbname=postgres",
        "query": f"postgresql://postgres@127.0.0.1:{port}/postgres?password={enc(password)}",
    }
    if socket_dir is not None:
        forms["host_query"] = (
            f"postgres://postgres@/postgres?host={socket_dir}&port={port}&password={enc(password)}"
        )
        forms["encoded_socket"] = (
            f"postgresql://postgres:{enc(password)}@{enc(socket_dir)}:{port}/postgres"
        )
        forms["socket_dsn"] = (
            f"host={socket_dir} port={port} user=postgres password={dsn_quote(password)}"
        )
    return forms


def redis_forms(
    port: int, password: str, *, acl: tuple[str, str] | None = None, socket: str | None = None
) -> dict[str, str]:
    """Every address form that reaches the Redis on ``port`` (and ``socket``) with ``password``.

    ``acl`` is ``(user, password)`` of an ACL user, tried as ``user:pw@``.
    """
    forms = {"default_user": f"redis://:{enc(password)}@127.0.0.1:{port}/0"}
    if acl is not None:
        forms["acl_user"] = f"redis://{acl[0]}:{enc(acl[1])}@127.0.0.1:{port}/0"
    if socket is not None:
        forms["unix"] = f"unix://:{enc(password)}@{socket}?db=2"
        forms["unix_query"] = f"unix://{socket}?db=3&password={enc(password)}"
    return forms


@dataclass
class ProtectedPostgres:
    """An own PostgreSQL whose user postgres needs :data:`PG_PASSWORD`."""

    server: OwnPostgres

    def forms(self, password: str = PG_PASSWORD) -> dict[str, str]:
        return pg_forms(self.server.port, password, self.server.folder)


@dataclass
class ProtectedRedis:
    """An own redis-server needing :data:`REDIS_PASSWORD` (and ACL user alice), with a socket."""

    server: OwnRedis

    @property
    def socket(self) -> str:
        return os.path.join(self.server.folder, "redis.sock")

    def forms(
        self, password: str = REDIS_PASSWORD, acl_password: str = ACL_PASSWORD
    ) -> dict[str, str]:
        return redis_forms(
            self.server.port, password, acl=(ACL_USER, acl_password), socket=self.socket
        )


def start_protected_postgres() -> ProtectedPostgres:
    return ProtectedPostgres(OwnPostgres(password=PG_PASSWORD).init().start())


def start_protected_redis() -> ProtectedRedis:
    server = OwnRedis(password=REDIS_PASSWORD)
    sock = os.path.join(server.folder, "redis.sock")
    server.args = [
        "--save", "", "--appendonly", "no",
        "--unixsocket", sock, "--unixsocketperm", "700",
        "--user", ACL_USER, "on", f">{ACL_PASSWORD}", "~*", "&*", "+@all",
    ]  # fmt: skip
    return ProtectedRedis(server.start())
