"""PostgreSQL checkpoint savers for LangGraph.

:class:`PostgresSaver` (sync) and :class:`AsyncPostgresSaver` (asyncio) share
one I/O-free core and the tables of langgraph-checkpoint-postgres, which they
adopt in place (``setup()`` only adds columns, indexes and tables).

Example:
    >>> from langgraph_durable.checkpointers.postgres import PostgresSaver  # doctest: +SKIP
    >>> with PostgresSaver.from_conn_string("postgresql://...") as saver:
    ...     saver.setup()
    ...     graph = builder.compile(checkpointer=saver)
"""

from langgraph_durable.checkpointers.postgres._aio import AsyncPostgresSaver
from langgraph_durable.checkpointers.postgres._sync import PostgresSaver

__all__ = ["AsyncPostgresSaver", "PostgresSaver"]
