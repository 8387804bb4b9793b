"""PostgreSQL checkpoint savers for LangGraph.

:class:`PostgresSaver` (sync) and :class:`AsyncPostgresSaver` (asyncio) share
one I/O-free core and the tables of langgraph-checkpoint-postgres, which they
adopt in place (``setup()`` only adds columns, indexes and tables).
:func:`apply_retention` / :func:`aapply_retention` delete or prune idle threads
under a :class:`RetentionPolicy`.

Example:
    >>> from langgraph_durable.checkpointers.postgres import PostgresSaver  # doctest: +SKIP
    >>> with PostgresSaver.from_conn_string("postgresql://...") as saver:
    ...     saver.setup()
    ...     graph = builder.compile(checkpointer=saver)
"""

from langgraph_durable.checkpointers.postgres._pool import DEFAULT_POOL_SIZE
from langgraph_durable.checkpointers.postgres._retention import apply_retention
from langgraph_durable.checkpointers.postgres._retention_async import aapply_retention
from langgraph_durable.checkpointers.postgres._retention_core import (
    RetentionPolicy,
    RetentionReport,
)
from langgraph_durable.checkpointers.postgres._saver import PostgresSaver
from langgraph_durable.checkpointers.postgres._saver_async import AsyncPostgresSaver

__all__ = [
    "DEFAULT_POOL_SIZE",
    "AsyncPostgresSaver",
    "PostgresSaver",
    "RetentionPolicy",
    "RetentionReport",
    "aapply_retention",
    "apply_retention",
]
