"""The storage area ``langgraph-durable demo`` works in: its own, fresh, removed afterwards.

The demo's worker sweeps with a clock moved minutes ahead. Pointed at an
application's database, a sweep of the application's schema or prefix would
decide the application's approvals early. So the demo never uses the schema
or prefix the URL names: it creates a schema (Postgres) or key prefix (Redis)
of its own, with a fresh random name, and removes it when the story ends,
whatever happened. Nothing else at that address is read or changed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, cast

from langgraph_durable.checkpointers.addresses import NAMESPACE, with_saver_option
from langgraph_durable.interrupts._cli_common import CliError, address_of, raise_connection_failure
from langgraph_durable.interrupts._cli_errors import describe

CREATE_SCHEMA = "CREATE SCHEMA {}"
"""Fails if the schema exists: the demo never adopts a schema it did not make."""
DROP_SCHEMA = "DROP SCHEMA IF EXISTS {} CASCADE"
SCAN_COUNT = 1000


@dataclass(frozen=True)
class DemoArea:
    """A schema or key prefix the demo made for one run.

    Attributes:
        url: The address with the demo's own ``?schema=`` / ``?prefix=`` (what
            the demo's processes open).
        backend: ``"postgres"`` or ``"redis"``.
        name: The schema or prefix.
    """

    url: str
    backend: str
    name: str

    @property
    def kind(self) -> str:
        """``"schema"`` or ``"prefix"``."""
        return NAMESPACE["postgres" if self.backend == "postgres" else "redis"]


def create_area(url: str) -> DemoArea:
    """Make a fresh schema or prefix at ``url`` for one run of the demo.

    Raises:
        CliError: the server cannot be reached or refuses (say, no right to
            create a schema).
    """
    address = address_of(url)
    if address.backend == "postgres":
        name = f"lgd_demo_{secrets.token_hex(6)}"
        _on_postgres(address, CREATE_SCHEMA, name)
    else:
        name = f"lgd-demo-{secrets.token_hex(6)}"
        # a random name nothing uses yet: its keys are what the demo writes, no more
        if _redis_keys(address, name):
            raise CliError(f"the demo's fresh prefix {name!r} is in use; run the demo again")
    return DemoArea(with_saver_option(url, name), address.backend, name)


def remove_area(area: DemoArea) -> None:
    """Drop the demo's schema, or delete every key of its prefix.

    Raises:
        CliError: the server could not be reached to remove it.
    """
    address = address_of(area.url)
    if area.backend == "postgres":
        _on_postgres(address, DROP_SCHEMA, area.name)
        return
    keys = _redis_keys(address, area.name)
    if keys:
        client = _redis_client(address)
        try:
            for key in keys:
                client.delete(key)  # one at a time: a cluster's keys sit in many slots
        finally:
            client.close()


def _on_postgres(address: Any, statement: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    try:
        with psycopg.connect(address.driver_url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL(statement).format(sql.Identifier(schema)))
    except psycopg.OperationalError as exc:
        raise_connection_failure(address, exc)
        raise
    except psycopg.Error as exc:
        raise CliError(
            f"the demo cannot {statement.split()[0].lower()} its schema {schema!r} at "
            f"{address.shown}: {describe(exc)}"
        ) from None


def _redis_client(address: Any) -> Any:
    from langgraph_durable.checkpointers.redis import connect

    try:
        return connect(address.driver_url, None)
    except Exception as exc:
        raise_connection_failure(address, exc)
        raise


def _redis_keys(address: Any, prefix: str) -> list[bytes]:
    """Every key of ``prefix`` (``prefix:...`` and the hash-tagged ``{prefix:...}``)."""
    from redis.cluster import RedisCluster

    client = _redis_client(address)
    try:
        cluster = isinstance(client, RedisCluster)
        nodes = cast(Any, client).get_primaries() if cluster else [None]
        found: list[bytes] = []
        for pattern in (f"{prefix}:*", f"{{{prefix}:*"):
            for node in nodes:
                extra = {} if node is None else {"target_nodes": node}
                found += client.scan_iter(match=pattern, count=SCAN_COUNT, **extra)
        return sorted(set(found))
    except Exception as exc:
        raise_connection_failure(address, exc)
        raise
    finally:
        client.close()
