"""Translation of psycopg errors at the saver boundary, by SQLSTATE.

psycopg files many server errors under ``OperationalError`` that have nothing
to do with reaching the server (class 54 "program limit exceeded": an index
row too large; class 55, 57P04 "database dropped", 40 "transaction
rollback"...). Reporting those as unavailability would make a caller that
retries on :class:`StorageUnavailableError` retry forever, so the class is
decided by the error's SQLSTATE, and only the connection and availability
codes below count as unavailable.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from langgraph_durable.checkpointers._errors import (
    CheckpointerError,
    LayoutVersionError,
    MissingGrantError,
    PoolTimeoutError,
    StorageRefusedError,
    StorageUnavailableError,
    setup_hint,
)
from langgraph_durable.migrations.postgres import latest_version

UNAVAILABLE_CLASSES = ("08", "53")
"""SQLSTATE classes of a server that cannot be reached or cannot serve now:
connection exceptions; insufficient resources (too many connections, out of
memory, disk full)."""

UNAVAILABLE_CODES = frozenset(("57P01", "57P02", "57P03", "57P05"))
"""Operator intervention that ends or refuses the session: admin shutdown, crash
shutdown, cannot connect now (starting up), idle session timeout."""


# the library's functions a role is granted EXECUTE on, with their signatures
_GRANTED_FUNCTIONS = {
    "durable_audit_append": "durable_audit_append(jsonb)",
    "durable_audit_purge": "durable_audit_purge(text)",
}
_DENIED_FUNCTION = re.compile(r"permission denied for function (\w+)")


def missing_grant(exc: psycopg.Error, schema: str | None) -> str | None:
    """The ``GRANT`` a refusal for want of ``EXECUTE`` on one of our functions calls for."""
    if not isinstance(exc, pg_errors.InsufficientPrivilege):
        return None
    found = _DENIED_FUNCTION.match(exc.diag.message_primary or "")
    function = _GRANTED_FUNCTIONS.get(found.group(1)) if found else None
    if function is None:
        return None
    where = '"' + schema.replace('"', '""') + '".' if schema else ""
    return f"GRANT EXECUTE ON FUNCTION {where}{function} TO <role>"


def is_unavailable(exc: psycopg.Error) -> bool:
    """Whether ``exc`` says the server could not be reached or could not serve the call."""
    code = exc.sqlstate
    if code is None:
        # raised by the client: a lost or closed connection, a connect timeout;
        # a pipeline aborted by an earlier error of its own is not one
        return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) and not (
            isinstance(exc, psycopg.errors.PipelineAborted)
        )
    return code[:2] in UNAVAILABLE_CLASSES or code in UNAVAILABLE_CODES


def database_of(conn: Any) -> str | None:
    """The name of the database ``conn`` (a psycopg connection, or ``None``) is on, if known."""
    if conn is None:
        return None
    try:
        return str(conn.info.dbname)
    except psycopg.Error:  # a connection closed since: the name is only for the message
        return None


def not_set_up(exc: psycopg.Error, schema: str | None, database: str | None) -> LayoutVersionError:
    """The error of a read or write on a schema where ``setup()`` never ran."""
    where = " of ".join(
        part
        for part in (
            f'schema "{schema}"' if schema else None,
            f'database "{database}"' if database else None,
        )
        if part
    )
    query = f"?schema={schema}" if schema and schema != "public" else ""
    hint = setup_hint(f"postgresql://...{query}")
    return LayoutVersionError(
        found=None,
        expected=latest_version(),
        hint=f"{hint}, before using the saver ({exc.diag.message_primary})",
        where=where or None,
    )


def translate(
    exc: psycopg.Error, operation: str, schema: str | None = None, database: str | None = None
) -> CheckpointerError:
    """The error a caller sees for a driver error raised during ``operation``.

    Connection loss and a server that cannot serve become
    :class:`StorageUnavailableError` (retry is safe: every write is one atomic
    statement or transaction); a missing table or schema becomes
    :class:`LayoutVersionError` (``setup()`` was not run: the message names
    ``schema`` and ``database``, and what to run); every other error the
    server (or the driver, before sending) answered with becomes
    :class:`StorageRefusedError` carrying its SQLSTATE, a missing ``EXECUTE``
    on one of our functions (in ``schema``) :class:`MissingGrantError` naming
    the grant.
    """
    if isinstance(exc, PoolTimeout):
        # checked first: PoolTimeout is an OperationalError too
        return PoolTimeoutError(
            backend="postgres",
            operation=operation,
            reason=f"no pooled connection became free ({exc}); all busy or server unreachable",
        )
    if is_unavailable(exc):
        return StorageUnavailableError(backend="postgres", operation=operation, reason=str(exc))
    if isinstance(exc, (pg_errors.UndefinedTable, pg_errors.InvalidSchemaName)):
        return not_set_up(exc, schema, database)
    grant = missing_grant(exc, schema)
    if grant is not None:
        return MissingGrantError(
            backend="postgres",
            operation=operation,
            code=exc.sqlstate,
            reason=str(exc),
            grant=grant,
        )
    return StorageRefusedError(
        backend="postgres", operation=operation, code=exc.sqlstate, reason=str(exc)
    )
