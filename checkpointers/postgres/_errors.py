"""Translation of psycopg errors at the saver boundary."""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from langgraph_durable.checkpointers._errors import (
    CheckpointerError,
    LayoutVersionError,
    PoolTimeoutError,
    StorageUnavailableError,
)
from langgraph_durable.migrations.postgres import latest_version


def translate(exc: psycopg.Error, operation: str) -> CheckpointerError | psycopg.Error:
    """The error a caller sees for a driver error raised during ``operation``.

    Connection loss becomes :class:`StorageUnavailableError` (retry is safe:
    every write is one atomic statement or transaction); a missing table or
    schema becomes :class:`LayoutVersionError` (``setup()`` was not run).
    Anything else is a bug or a server-side refusal and is re-raised as is.
    """
    if isinstance(exc, PoolTimeout):
        # checked first: PoolTimeout is an OperationalError too
        return PoolTimeoutError(
            backend="postgres",
            operation=operation,
            reason=f"no pooled connection became free ({exc}); all busy or server unreachable",
        )
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return StorageUnavailableError(backend="postgres", operation=operation, reason=str(exc))
    if isinstance(exc, (pg_errors.UndefinedTable, pg_errors.InvalidSchemaName)):
        return LayoutVersionError(
            found=None,
            expected=latest_version(),
            hint=f"{exc.diag.message_primary}; call setup() before using the saver",
        )
    return exc
