"""The types of what the helpers act on: a compiled graph, a saver, or either.

Written as aliases so a caller's mypy checks what it passes: a compiled graph
is LangGraph's ``Pregel`` (what ``StateGraph(...).compile(...)`` returns), a
saver any ``BaseCheckpointSaver``.
"""

from __future__ import annotations

from typing import Any, TypeAlias, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Checkpointer

CompiledGraph: TypeAlias = Pregel[Any, Any, Any, Any]
"""A compiled LangGraph graph, e.g. ``StateGraph(State).compile(checkpointer=saver)``."""

Saver: TypeAlias = BaseCheckpointSaver[Any]
"""A LangGraph checkpoint saver: ours or any other."""

GraphOrSaver: TypeAlias = CompiledGraph | Saver
"""A compiled graph, or (for a call that does not resume the run) its saver alone."""

G = TypeVar("G", bound=CompiledGraph)


def saver_of(graph: CompiledGraph) -> Saver:
    """The saver ``graph`` was compiled with.

    Raises:
        ValueError: the graph has no saver instance (compiled without a
            checkpointer, or with ``checkpointer=True`` / ``False``).
    """
    saver: Checkpointer = getattr(graph, "checkpointer", None)
    if saver is None or isinstance(saver, bool):
        raise ValueError("the graph must be compiled with a checkpointer (a saver instance)")
    return saver
