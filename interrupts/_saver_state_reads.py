# Generated from interrupts/_saver_state_reads_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""A thread's pending interrupts read from the saver alone, written once for both modes.

The sync module (:mod:`._saver_state_reads`) is generated from this one by
``tools/async_to_sync.py``; :mod:`._saver_state` offers both and the
:class:`~langgraph_durable.interrupts._saver_state.SaverView` over them.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.interrupts._saver_state_shape import SavedState, state_of


def saver_state(saver: BaseCheckpointSaver[Any], config: dict[str, Any]) -> SavedState:
    """The latest checkpoint's pending interrupts of ``config``'s thread."""
    return state_of(saver.get_tuple(cast(RunnableConfig, config)))


def saver_history(
    saver: BaseCheckpointSaver[Any], config: dict[str, Any], limit: int
) -> list[SavedState]:
    """The thread's newest ``limit`` checkpoints, newest first."""
    return [state_of(t) for t in saver.list(cast(RunnableConfig, config), limit=limit)]
