"""A thread's pending interrupts read from the saver alone, for graph-less callers.

``approve(saver, config, ..., resume=False)`` records a decision in a process
that does not host the graph (an approval UI, the ``approve`` command without
``--graph``). All it needs of the thread's state is which interrupts are
pending, and the saver holds those: the ``__interrupt__`` writes of the
thread's latest checkpoint. What is read is in :mod:`._saver_state_shape`;
the reads are written once, async, in :mod:`._saver_state_reads_async` (the
sync module generated from it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.interrupts._saver_state_reads import saver_history, saver_state
from langgraph_durable.interrupts._saver_state_reads_async import asaver_history, asaver_state
from langgraph_durable.interrupts._saver_state_shape import SavedState, state_of

__all__ = [
    "SavedState",
    "SaverView",
    "asaver_history",
    "asaver_state",
    "saver_history",
    "saver_state",
    "state_of",
]


class SaverView:
    """A graph's state reads, answered from the saver alone (for graph-less flows).

    Has the ``get_state`` / ``get_state_history`` methods (and async twins)
    that :class:`~langgraph_durable.interrupts._driver.Env` calls on a graph, so a flow runs the
    same with a compiled graph or with its saver only.
    """

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    def get_state(self, config: dict[str, Any]) -> SavedState:
        """See :func:`saver_state`."""
        return saver_state(self.saver, config)

    async def aget_state(self, config: dict[str, Any]) -> SavedState:
        """See :func:`asaver_state`."""
        return await asaver_state(self.saver, config)

    def get_state_history(self, config: dict[str, Any], *, limit: int) -> list[SavedState]:
        """See :func:`saver_history`."""
        return saver_history(self.saver, config, limit)

    async def aget_state_history(
        self, config: dict[str, Any], *, limit: int
    ) -> AsyncIterator[SavedState]:
        """See :func:`asaver_history`."""
        for state in await asaver_history(self.saver, config, limit):
            yield state
