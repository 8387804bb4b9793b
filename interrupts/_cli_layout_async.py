"""Whether ``setup()`` ran where a saver points: one read on the saver's own connection.

The command line asks this once when it opens storage (every command but ``setup``), so a
schema or prefix nobody set up (a typo, most often) is an error and not an empty inbox.

Written once: the sync module (:mod:`._cli_layout`) is generated from this one by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

from typing import Any


async def is_set_up(saver: Any, backend: str) -> bool:
    """Whether the saver's schema (Postgres) or key prefix (Redis) holds a storage layout.

    One round trip: the layout version key on Redis, the layout table on Postgres
    (its statement as the saver renders it for its schema).

    Args:
        saver: A Postgres or Redis saver of this library, opened.
        backend: ``"postgres"`` or ``"redis"`` (the address's), so that a Redis
            command never imports psycopg.
    """
    if backend == "redis":
        return int(await saver.client.exists(saver.core.keys.layout())) > 0
    return await _postgres_layout_found(saver.conn, saver.core.queries.layout_version)


async def _postgres_layout_found(conn: Any, query: Any) -> bool:
    from psycopg import errors
    from psycopg_pool import AsyncConnectionPool

    try:
        if isinstance(conn, AsyncConnectionPool):
            async with conn.connection() as pooled:
                cursor = await pooled.execute(query)
                row = await cursor.fetchone()
        else:
            cursor = await conn.execute(query)
            row = await cursor.fetchone()
    except (errors.UndefinedTable, errors.InvalidSchemaName):
        return False
    except errors.InsufficientPrivilege:
        return True  # the layout table is there; this role may not read it
    return row is not None and row[0] is not None
