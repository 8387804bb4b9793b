"""How a checkpoint shows that a run of its thread ended (no I/O).

Used by the run book (:mod:`langgraph_durable.checkpointers._run_book`) to see a
run finish, and by recovery to tell a finished or waiting thread from an
orphaned one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, TASKS

from langgraph_durable.checkpointers._leases import ENDED_FINISHED, ENDED_INTERRUPTED

RESUME = "__resume__"
START = "__start__"
# Channels through which a StateGraph or functional-API graph triggers nodes.
_TRIGGER_PREFIXES = ("branch:to:", "join:")


def may_have_next(checkpoint: Mapping[str, Any]) -> bool:
    """Whether a step could follow ``checkpoint`` (``False`` means the run is done).

    Conservative: ``True`` whenever in doubt. A checkpoint has a next task only
    if its last step updated a channel some node is triggered by, or left
    ``Send`` packets. Node triggers are the ``branch:to:``/``join:`` channels and
    ``__start__`` (StateGraph, functional API) plus, for raw Pregel graphs, the
    channels recorded in ``versions_seen`` by nodes that ran before.
    """
    updated = checkpoint.get("updated_channels")
    if updated is None:
        return True
    values = checkpoint.get("channel_values") or {}
    if values.get(TASKS):
        return True
    seen = checkpoint.get("versions_seen") or {}
    known: set[str] = set()
    for node, versions in seen.items():
        if node != INTERRUPT and isinstance(versions, Mapping):
            known.update(versions)
    return any(c == START or c.startswith(_TRIGGER_PREFIXES) or c in known for c in updated)


def end_shown_by(checkpoint_tuple: Any) -> str | None:
    """How a thread's latest root checkpoint says its last run ended, if it did.

    ``"interrupted"`` (waiting at an interrupt: a pending ``__interrupt__``
    write and no ``__resume__``), ``"finished"`` (no step can follow), or
    ``None``: unfinished, a run is going or died mid-way. ``checkpoint_tuple``
    is what ``get_tuple`` returns (``None``: no checkpoint, so not ended).
    """
    if checkpoint_tuple is None:
        return None
    channels = {w[1] for w in checkpoint_tuple.pending_writes or ()}
    if INTERRUPT in channels and RESUME not in channels:
        return ENDED_INTERRUPTED
    if ERROR not in channels and not may_have_next(checkpoint_tuple.checkpoint):
        return ENDED_FINISHED
    return None
