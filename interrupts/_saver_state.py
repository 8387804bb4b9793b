"""A thread's pending interrupts read from the saver alone, for graph-less callers.

``approve(saver, config, ..., resume=False)`` records a decision in a process
that does not host the graph (an approval UI, the ``approve`` command without
``--graph``). All it needs of the thread's state is which interrupts are
pending, and the saver holds those: the ``__interrupt__`` writes of the
thread's latest checkpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.types import Interrupt

from langgraph_durable.interrupts._pregel import CONTROL_WRITES, INTERRUPT, NULL_TASK_ID


@dataclass(frozen=True)
class SavedState:
    """The part of a ``StateSnapshot`` the decision flows read."""

    interrupts: tuple[Interrupt, ...] = ()
    next: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)


def state_of(tup: CheckpointTuple | None) -> SavedState:
    """The interrupts pending at checkpoint ``tup`` (empty for ``None``).

    As ``graph.get_state`` counts them: the interrupts of tasks that have not
    finished. A task that was resumed and finished keeps its ``__interrupt__``
    write in the step's log, but its output writes mark it done (with two
    approvals pending in one step, answering one leaves one pending, not two).
    """
    if tup is None:
        return SavedState()
    found: dict[str, Interrupt] = {}
    finished = {
        task
        for task, channel, _ in tup.pending_writes or ()
        if task != NULL_TASK_ID and channel not in CONTROL_WRITES
    }
    for task, channel, value in tup.pending_writes or ():
        if channel != INTERRUPT or task in finished:
            continue
        for intr in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(intr, Interrupt) and intr.id not in found:
                found[intr.id] = intr
    interrupts = tuple(found.values())
    return SavedState(
        interrupts=interrupts,
        next=(INTERRUPT,) if interrupts else (),
        config=dict(tup.config),
    )


def saver_state(saver: BaseCheckpointSaver[Any], config: dict[str, Any]) -> SavedState:
    """The latest checkpoint's pending interrupts of ``config``'s thread."""
    return state_of(saver.get_tuple(cast(RunnableConfig, config)))


async def asaver_state(saver: BaseCheckpointSaver[Any], config: dict[str, Any]) -> SavedState:
    """Async twin of :func:`saver_state`."""
    if _sync_only(saver, "aget_tuple"):
        return await asyncio.to_thread(saver_state, saver, config)
    return state_of(await saver.aget_tuple(cast(RunnableConfig, config)))


def _sync_only(saver: BaseCheckpointSaver[Any], method: str) -> bool:
    """Whether ``saver`` leaves LangGraph's async ``method`` unimplemented (a sync saver)."""
    return getattr(type(saver), method, None) is getattr(BaseCheckpointSaver, method)


def saver_history(
    saver: BaseCheckpointSaver[Any], config: dict[str, Any], limit: int
) -> list[SavedState]:
    """The thread's newest ``limit`` checkpoints, newest first."""
    return [state_of(t) for t in saver.list(cast(RunnableConfig, config), limit=limit)]


async def asaver_history(
    saver: BaseCheckpointSaver[Any], config: dict[str, Any], limit: int
) -> list[SavedState]:
    """Async twin of :func:`saver_history`."""
    if _sync_only(saver, "alist"):
        return await asyncio.to_thread(saver_history, saver, config, limit)
    return [state_of(t) async for t in saver.alist(cast(RunnableConfig, config), limit=limit)]


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
