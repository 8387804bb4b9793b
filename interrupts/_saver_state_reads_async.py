"""A thread's pending interrupts read from the saver alone, written once for both modes.

The sync module (:mod:`._saver_state_reads`) is generated from this one by
``tools/async_to_sync.py``; :mod:`._saver_state` offers both and the
:class:`~langgraph_durable.interrupts._saver_state.SaverView` over them.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.interrupts import _saver_state_reads  # async-only
from langgraph_durable.interrupts._saver_state_shape import SavedState, state_of


async def asaver_state(saver: BaseCheckpointSaver[Any], config: dict[str, Any]) -> SavedState:
    """The latest checkpoint's pending interrupts of ``config``'s thread."""
    if _sync_only(saver, "aget_tuple"):  # async-only
        return await asyncio.to_thread(_saver_state_reads.saver_state, saver, config)
    return state_of(await saver.aget_tuple(cast(RunnableConfig, config)))


async def asaver_history(
    saver: BaseCheckpointSaver[Any], config: dict[str, Any], limit: int
) -> list[SavedState]:
    """The thread's newest ``limit`` checkpoints, newest first."""
    if _sync_only(saver, "alist"):  # async-only
        return await asyncio.to_thread(_saver_state_reads.saver_history, saver, config, limit)
    return [state_of(t) async for t in saver.alist(cast(RunnableConfig, config), limit=limit)]


def _sync_only(saver: BaseCheckpointSaver[Any], method: str) -> bool:  # async-only
    """Whether ``saver`` leaves LangGraph's async ``method`` unimplemented (a sync saver).

    Such a saver's sync call then runs in a worker thread.
    """
    return getattr(type(saver), method, None) is getattr(BaseCheckpointSaver, method)
