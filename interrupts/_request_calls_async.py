"""``arequest_approval``: pause the run until a human decides; call inside a node.

The state machine it drives (ask, escalate, re-ask a stale request) is
:func:`~langgraph_durable.interrupts._request.approval_flow`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from langgraph_durable.interrupts._authz import thread_of_run
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._models import Decision, OnTimeout
from langgraph_durable.interrupts._perform_async import adrive
from langgraph_durable.interrupts._request import (
    OnReject,
    OnStale,
    approval_flow,
    checked_ask,
    node_env_for,
)
from langgraph_durable.interrupts._shapes import (
    DEFAULT_ALLOWED,
    UiShape,
)


async def arequest_approval(
    request: Any,
    *,
    timeout: timedelta | float | None = None,
    on_timeout: OnTimeout = "reject",
    approvers: str | Iterable[str] = (),
    on_stale: OnStale = "reask",
    clock: Clock | None = None,
    forbid: str | Iterable[str] = (),
    on_reject: OnReject = "return",
    allowed_decisions: Sequence[str] = DEFAULT_ALLOWED,
    action: str | None = None,
    description: str | None = None,
    ui: UiShape = "hitl",
) -> Decision:
    """Pause the run until a human decides on ``request``; call inside a node.

    Await the async form in ``async def`` nodes on async savers.

    The interrupt's value carries LangChain's human-in-the-loop request
    (``action_requests``, ``review_configs``) beside the deadline key, so Studio,
    Agent Inbox and the SDK render it, and any ``Command(resume=...)`` answers it:
    ``True``/``False``, ``"approve"``/``"reject"``, a ``HITLResponse``
    (``{"decisions": [{"type": "approve"}]}``...) or a legacy ``HumanResponse``
    list. Such a resume is a decision like ``approve()``'s: authorized, recorded
    once with compare-and-set and audited inside the node; a refused one raises
    from the resuming ``invoke`` and the approval keeps waiting.

    Args:
        request: JSON-able payload shown to the approver (and fingerprinted); a dict
            is the action's ``args``.
        timeout: How long to wait before ``on_timeout`` applies: a ``timedelta`` or a
            number of seconds, positive and at most 100 years; ``None`` waits forever.
        on_timeout: ``"reject"``, ``"approve"`` or ``Escalate``; applied
            by :class:`~langgraph_durable.interrupts.ApprovalSweeper` once the deadline passes.
        approvers: Routing labels or user ids asked (the inbox filters on them); a
            string is one approver.
        on_stale: When the node re-runs and computes a different ``request`` than the one
            decided: ``"reask"`` (default) asks again with the new payload, ``"raise"``
            raises :class:`~langgraph_durable.interrupts.StaleApproval`.
        forbid: Separation of duties: ``["requester"]`` refuses decisions by whoever
            started the run (``config["configurable"]["requested_by"]``, which the run
            must then set).
        clock: Time source; defaults to the clock the run was given
            (``approve(..., clock=)``, ``ApprovalSweeper(clock=)``), else real UTC time.
        on_reject: ``"return"`` (default) returns the rejection; ``"compensate"``
            raises :class:`~langgraph_durable.interrupts.Compensate`, so a graph wired with
            :func:`~langgraph_durable.interrupts.add_compensation` undoes its committed steps (the
            reason names who rejected, or the timeout, and the comment).
        allowed_decisions: What the decider may answer, among ``"approve"``,
            ``"reject"``, ``"edit"`` (approve with changed arguments:
            :attr:`Decision.edited`) and ``"respond"`` (a text answer:
            :attr:`Decision.response`). The sweeper's timeout rules apply whatever this says.
        action: The action's name shown (default: the request's ``"action"`` text,
            else ``"approval"``).
        description: Text shown to the approver with the action.
        ui: ``"hitl"`` (LangChain v1's ``HITLRequest``) or ``"human_interrupt"``
            (the legacy Agent Inbox ``HumanInterrupt`` list).

    Returns:
        The :class:`~langgraph_durable.interrupts.Decision`.

    Raises:
        InvalidInput: an argument is wrong (names it; nothing is asked), or
            ``forbid=["requester"]`` on a run that did not say who requested it.
        StaleApproval: with ``on_stale="raise"``, when the decided payload changed.
        Compensate: with ``on_reject="compensate"``, when the request was rejected;
            and when an operator cancelled the run of a graph wired for compensation.
        ResumeNotUnderstood, DecisionNotAllowed, NotAuthorized, AlreadyDecided: a
            ``Command(resume=...)`` was refused (audited; nothing recorded; the
            approval still waits).
    """
    ask = checked_ask(
        request,
        timeout=timeout,
        on_timeout=on_timeout,
        approvers=approvers,
        on_stale=on_stale,
        clock=clock,
        forbid=forbid,
        on_reject=on_reject,
        allowed_decisions=allowed_decisions,
        action=action,
        description=description,
        ui=ui,
    )
    flow = approval_flow(ask, thread_of_run(), "request_approval")
    return await adrive(flow, node_env_for("request_approval"))
