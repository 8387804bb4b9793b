"""Public data models: decisions, escalation policies, inbox items, health."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._inputs import check_names, check_timeout


class Escalate(BaseModel):
    """On timeout, ask somebody else instead of deciding.

    Args:
        to: Approver label(s) asked at the next level (a string is one label).
        timeout: How long the next level waits: a ``timedelta`` or a number of
            seconds, positive and at most 100 years.
        then: What happens when the next level times out too: ``"reject"``,
            ``"approve"`` or another :class:`Escalate` (a longer chain).

    Raises:
        InvalidInput: ``to`` is not a label or a list of labels, or ``timeout``
            is not a positive wait of at most 100 years.

    Example:
        ``Escalate(to="manager", timeout=timedelta(hours=1), then="reject")``
    """

    model_config = ConfigDict(frozen=True)

    to: list[str]
    timeout: timedelta
    then: Union[Literal["reject", "approve"], Escalate] = "reject"  # noqa: UP007

    def __init__(
        self,
        to: str | list[str] | tuple[str, ...],
        timeout: timedelta | float,
        then: Literal["reject", "approve"] | Escalate = "reject",
        **data: Any,
    ) -> None:
        super().__init__(
            to=check_names(to, "Escalate.to"), timeout=_next_wait(timeout), then=then, **data
        )


def _next_wait(timeout: Any) -> timedelta:
    wait = check_timeout(timeout, "Escalate.timeout")
    if wait is None:
        raise InvalidInput(
            parameter="Escalate.timeout", reason="is required: how long the next level waits"
        )
    return wait


OnTimeout = Union[Literal["reject", "approve"], Escalate]  # noqa: UP007
"""What the sweeper does when an approval's deadline passes."""


class Escalation(BaseModel):
    """One escalation step, as kept in :attr:`Decision.escalations`.

    Attributes:
        level: The level asked after this step (1 for the first escalation).
        at: When the previous level timed out (UTC).
        from_approvers: Who was asked before.
        to: Who is asked now.
        deadline: The new deadline.
    """

    level: int
    at: datetime
    from_approvers: list[str] = Field(default_factory=list)
    to: list[str] = Field(default_factory=list)
    deadline: datetime | None = None


class Decision(BaseModel):
    """The outcome of :func:`~langgraph_durable.interrupts.request_approval`.

    Attributes:
        approved: ``True`` to go ahead.
        by: Who decided; ``"system"`` when a timeout rule decided.
        at: When the decision was recorded (UTC).
        comment: Free text from the decider.
        timed_out: ``True`` when the timeout rule decided.
        escalations: The escalation steps taken before the decision.
        approval_id: The interrupt id of the ask that was decided.
        level: The escalation level that was decided.
        roles: Roles the decider claimed (for authorization policies).
        rule: For timeouts, the rule that applied (``"on_timeout=reject"``).
        history: Earlier decisions that went stale (the request changed).
        extra: Extension data carried with the decision (e.g. ``on_reject``).
        type: What was decided: ``approve``, ``reject``, ``edit`` (approved with
            changed arguments), ``respond`` (a text answer instead of a yes/no; not
            approved) or ``cancel`` (an operator cancelled the run; not approved).
        edited: For ``edit``: the arguments to run instead of the request's (what
            was approved is what runs); else ``None``.
        response: For ``respond``: the answer for the agent; else ``None``.
        via: How it arrived: ``"api"`` (approve/reject/decide and the CLI),
            ``"resume"`` (a ``Command(resume=...)``: Studio, Agent Inbox, the SDK) or
            ``"sweeper"`` (a timeout rule).
    """

    approved: bool
    by: str
    at: datetime
    comment: str | None = None
    timed_out: bool = False
    escalations: list[Escalation] = Field(default_factory=list)
    approval_id: str | None = None
    level: int = 0
    roles: list[str] = Field(default_factory=list)
    rule: str | None = None
    history: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    type: str = ""
    edited: Any = None
    response: str | None = None
    via: str = "api"

    def model_post_init(self, context: Any, /) -> None:
        """Default ``type`` from ``approved`` (records made before edit/respond existed)."""
        if not self.type:
            self.type = "approve" if self.approved else "reject"


class BatchItemState(BaseModel):
    """One item of a batch as the inbox shows it.

    Attributes:
        key: The item key.
        item: The item payload.
        decided: Whether a decision is recorded.
        approved: The decision, when decided.
        by: Who decided, when decided.
        at: When, when decided.
        timed_out: Decided by the timeout rule.
    """

    key: str
    item: Any = None
    decided: bool = False
    approved: bool | None = None
    by: str | None = None
    at: datetime | None = None
    timed_out: bool = False


class ApprovalItem(BaseModel):
    """One entry of the approval inbox (:func:`~langgraph_durable.interrupts.pending_approvals`).

    Attributes:
        thread_id: The waiting thread.
        approval_id: The interrupt id to pass as ``approval_id=``.
        kind: ``"approval"`` or ``"batch"``.
        request: The request payload (for a batch: the list of items).
        requested_at: When this ask was raised (UTC).
        deadline: When the timeout rule applies, or ``None``.
        escalation_level: 0 for the first ask.
        approvers: Who is asked.
        items: For a batch, each item with its open/decided state.
    """

    thread_id: str
    approval_id: str
    kind: str = "approval"
    request: Any = None
    requested_at: datetime | None = None
    deadline: datetime | None = None
    escalation_level: int = 0
    approvers: list[str] = Field(default_factory=list)
    items: list[BatchItemState] = Field(default_factory=list)


class ApprovalHealth(BaseModel):
    """What :func:`~langgraph_durable.interrupts.approval_health` reports.

    Attributes:
        waiting: Approvals waiting (not yet decided or swept).
        overdue: Of those, how many are past their deadline.
        oldest_overdue_age: How long the oldest overdue one is past its
            deadline; a large value means no sweeper is running.
        checked_at: When this was measured (UTC).
    """

    waiting: int
    overdue: int
    oldest_overdue_age: timedelta | None = None
    checked_at: datetime


def policy_to_json(policy: OnTimeout) -> dict[str, Any]:
    """Serialize an ``on_timeout`` policy into the interrupt value."""
    if isinstance(policy, Escalate):
        # checked again here: an Escalate built without __init__ (model_construct)
        return {
            "action": "escalate",
            "to": check_names(policy.to, "Escalate.to"),
            "timeout_s": _next_wait(policy.timeout).total_seconds(),
            "then": policy_to_json(policy.then),
        }
    if policy not in ("reject", "approve"):
        raise InvalidInput(
            parameter="on_timeout",
            reason=f'expected "reject", "approve" or Escalate(...), got {policy!r}',
        )
    return {"action": policy}


def policy_rule(policy: dict[str, Any]) -> str:
    """A short human name of a serialized policy, recorded with timeout decisions."""
    return f"on_timeout={policy.get('action', 'reject')}"
