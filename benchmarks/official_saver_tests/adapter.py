"""The conftest of langgraph-checkpoint-postgres's own test files, with our savers swapped in.

``run.py`` copies this file next to the official ``test_sync.py`` and
``test_async.py`` as ``tests/conftest.py``. pytest imports it before the test
modules, so their ``from langgraph.checkpoint.postgres import PostgresSaver``
(and ``...aio import AsyncPostgresSaver``) pick up langgraph-durable's classes.
Nothing else of the official test setup is used (its ``clear_test_db`` deletes
tables in a shared database; each official test makes its own database anyway).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import langgraph.checkpoint.postgres as official
import langgraph.checkpoint.postgres.aio as official_aio

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver

# the official tests append a database name: a server URL ending in "/"
_SERVER = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DEFAULT_POSTGRES_URI = urlunsplit(urlsplit(_SERVER)._replace(path="/"))


def _check_pipe(conn: Any, pipe: Any) -> None:
    # our savers take no pipe=: they run on a connection the caller put in
    # pipeline mode as it is (each call syncs before it returns)
    if pipe is not None and getattr(conn, "_pipeline", None) is not pipe:
        raise AssertionError("pipe= must be the connection's own pipeline")


class DurablePostgresSaver(PostgresSaver):
    """``PostgresSaver`` taking the official constructor's ``(conn, pipe, serde)``."""

    def __init__(self, conn: Any, pipe: Any = None, serde: Any = None) -> None:
        _check_pipe(conn, pipe)
        super().__init__(conn, serde=serde)


class DurableAsyncPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` taking the official constructor's ``(conn, pipe, serde)``."""

    def __init__(self, conn: Any, pipe: Any = None, serde: Any = None) -> None:
        _check_pipe(conn, pipe)
        super().__init__(conn, serde=serde)


# we have no shallow saver: its cases run the regular one (prune() keeps the latest)
official.PostgresSaver = official.ShallowPostgresSaver = DurablePostgresSaver
official_aio.AsyncPostgresSaver = DurableAsyncPostgresSaver
official_aio.AsyncShallowPostgresSaver = DurableAsyncPostgresSaver
