"""The undo report a human reads when an undo keeps failing."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from langgraph.types import Command
from pydantic import BaseModel, Field

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker

UndoAction = Literal["retry", "skip", "abort"]
"""What a human can answer: run the undo again, leave it undone, stop compensating."""

ACTIONS: tuple[UndoAction, ...] = ("retry", "skip", "abort")


class ErrorInfo(BaseModel):
    """An exception as a person reads it: which node, what type, what it said.

    Attributes:
        node: The node (or undo) that raised, if known.
        type: Qualified exception type (``builtins`` types unqualified).
        message: ``str(exception)``; no traceback.
    """

    node: str | None = None
    type: str
    message: str


class StepInfo(BaseModel):
    """One compensable step of the saga.

    Attributes:
        id: Stable id of the step (the node's task namespace).
        node: The node that committed it.
        undo: Registered name of its undo.
        status: ``committed`` (not undone), ``compensated``, ``skipped`` (a
            human chose to leave it) or ``failed`` (its undo keeps failing).
        attempts: Undo attempts made so far.
        error: The last undo error, if any.
        committed_at: When the node completed (UTC).
        undone_at: When its undo completed (UTC), if it did.
    """

    id: str
    node: str
    undo: str
    status: Literal["committed", "compensated", "skipped", "failed"]
    attempts: int = 0
    error: ErrorInfo | None = None
    committed_at: datetime | None = None
    undone_at: datetime | None = None


class UndoReport(BaseModel):
    """What went wrong and what a human can do about it (JSON-serializable).

    The thread pauses on an interrupt whose value is this report as JSON
    (:meth:`to_interrupt_value`: ``model_dump(mode="json")`` plus the
    ``undo`` wait marker, so the savers' wait index lists it); rebuild it
    with :meth:`from_interrupt`. Resume with :func:`resume_undo` (or plain
    ``Command(resume="retry" | "skip" | "abort")``). The report, with the
    decision filled in, stays in the saga log of the final state.

    Attributes:
        thread_id: The thread.
        reason: Why compensation started (the ``Compensate`` reason or the
            failed node's error message).
        failure: The forward-path failure that started compensation.
        failed_step: The step whose undo keeps failing.
        undo_error: Its last error.
        attempts: How many times the undo was tried.
        committed: Every step the forward path committed, in completion order.
        compensated: Steps already undone.
        skipped: Steps a human chose to leave undone.
        remaining: Steps still to undo, in the order they will be undone
            (the failed one first).
        actions: What the human can answer.
        created_at: When the report was made (UTC).
        decision: The human's answer, once given.
        decided_by: Who answered, if they said.
        note: Free text the human gave with the answer.
        decided_at: When the answer was applied (UTC).
    """

    thread_id: str | None = None
    reason: str | None = None
    failure: ErrorInfo | None = None
    failed_step: StepInfo
    undo_error: ErrorInfo
    attempts: int
    committed: list[StepInfo] = Field(default_factory=list)
    compensated: list[StepInfo] = Field(default_factory=list)
    skipped: list[StepInfo] = Field(default_factory=list)
    remaining: list[StepInfo] = Field(default_factory=list)
    actions: list[UndoAction] = Field(default_factory=lambda: list(ACTIONS))
    created_at: datetime
    decision: UndoAction | None = None
    decided_by: str | None = None
    note: str | None = None
    decided_at: datetime | None = None

    def to_interrupt_value(self) -> dict[str, Any]:
        """The interrupt value: this report as JSON plus the ``undo`` wait marker."""
        value = self.model_dump(mode="json")
        value[WAIT_KEY] = wait_marker("undo", None)
        return value

    @classmethod
    def from_interrupt(cls, value: Any) -> UndoReport:
        """Rebuild a report from an interrupt (or its value, or a stored report dict)."""
        value = getattr(value, "value", value)
        if isinstance(value, UndoReport):
            return value
        if not isinstance(value, dict):
            raise TypeError(f"not an undo report: {value!r}")
        return cls.model_validate({k: v for k, v in value.items() if k != WAIT_KEY})

    def summary(self) -> str:
        """One paragraph for a notification or a log line."""
        return (
            f"Compensation of thread {self.thread_id!r} is stuck: undo {self.failed_step.undo!r} "
            f"of step {self.failed_step.node!r} failed {self.attempts} time(s) with "
            f"{self.undo_error.type}: {self.undo_error.message}. Started because: {self.reason}. "
            f"Compensated: {[s.node for s in self.compensated]}; "
            f"remaining: {[s.node for s in self.remaining]}. "
            f"Answer one of {self.actions}."
        )


def is_undo_report(value: Any) -> bool:
    """``True`` if an interrupt value is an :class:`UndoReport`."""
    value = getattr(value, "value", value)
    marker = value.get(WAIT_KEY) if isinstance(value, dict) else None
    return isinstance(marker, dict) and marker.get("kind") == "undo"


def resume_undo(
    action: UndoAction, *, by: str | None = None, note: str | None = None
) -> Command[Any]:
    """The ``Command`` that answers a pending :class:`UndoReport`.

    Args:
        action: ``"retry"`` runs the failed undo again (``max_attempts`` more
            tries), ``"skip"`` leaves that step undone and goes on with the
            others, ``"abort"`` stops compensating (the remaining steps stay
            committed and are listed in the final state).
        by: Who decided, recorded in the report.
        note: Why, recorded in the report.

    Raises:
        ValueError: unknown action.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown undo action {action!r}; expected one of {ACTIONS}")
    if by is None and note is None:
        return Command(resume=action)
    return Command(resume={"action": action, "by": by, "note": note})


def parse_decision(resume: Any) -> tuple[UndoAction, str | None, str | None]:
    """``(action, by, note)`` from a resume value (a string or a dict)."""
    action: Any = None
    by: Any = None
    note: Any = None
    if isinstance(resume, str):
        action = resume
    elif isinstance(resume, dict):
        action, by, note = resume.get("action"), resume.get("by"), resume.get("note")
    if action not in ACTIONS:
        raise ValueError(f"an undo report is answered with one of {ACTIONS}, got {resume!r}")
    return action, None if by is None else str(by), None if note is None else str(note)
