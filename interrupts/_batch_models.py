"""What a batch approval returns and what one ``decide`` call did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class ItemDecision(BaseModel):
    """How one batch item was decided.

    Attributes:
        key: The item key.
        approved: The decision.
        by: Who decided (``"system"`` for a timeout).
        at: When (UTC).
        comment: The decider's comment.
        timed_out: Decided by ``on_timeout``.
        history: Earlier decisions of this item that went stale.
        type: ``approve``, ``reject``, ``edit`` or ``respond`` (see :class:`Decision`).
        edited: For ``edit``: the item to act on instead of the one shown.
        response: For ``respond``: the decider's text answer.
        via: ``"api"``, ``"resume"`` or ``"sweeper"``.
    """

    key: str
    approved: bool
    by: str
    at: datetime
    comment: str | None = None
    timed_out: bool = False
    history: list[dict[str, Any]] = Field(default_factory=list)
    type: str = ""
    edited: Any = None
    response: str | None = None
    via: str = "api"

    def model_post_init(self, context: Any, /) -> None:
        """Default ``type`` from ``approved``."""
        if not self.type:
            self.type = "approve" if self.approved else "reject"


class BatchDecision(BaseModel):
    """The outcome of :func:`request_batch_approval`.

    Attributes:
        approved: The approved items, in request order (an edited item as edited).
        rejected: The rejected items.
        timed_out: Keys of the items decided by the timeout rule.
        decisions: Each item's :class:`ItemDecision`, by key.
    """

    approved: list[Any] = Field(default_factory=list)
    rejected: list[Any] = Field(default_factory=list)
    timed_out: list[str] = Field(default_factory=list)
    decisions: dict[str, ItemDecision] = Field(default_factory=dict)


class DecideResult(BaseModel):
    """What one :func:`decide` call did.

    Attributes:
        batch_id: The batch (interrupt id).
        applied: Keys whose decision this call recorded.
        already_decided: Keys somebody else decided first, with who and when.
        completed: Whether this call resumed the run (every item decided).
        result: The resumed run's result, when ``completed``.
        deferred: This call decided the last open item and recorded the batch's
            completion without resuming the run (``resume=False``, or a run holds
            the thread on a ``multitask="reject"`` saver); a sweep resumes it.
    """

    batch_id: str
    applied: list[str] = Field(default_factory=list)
    already_decided: dict[str, dict[str, Any]] = Field(default_factory=dict)
    completed: bool = False
    result: Any = None
    deferred: bool = False
