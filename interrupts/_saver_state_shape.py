"""What the decision flows read of a thread's state: its pending interrupts at a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
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
