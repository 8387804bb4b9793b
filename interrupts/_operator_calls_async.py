"""The operator calls on a waiting approval: ``aextend``, ``areassign``, ``aremind``, ``acancel``.

See :mod:`._operate` for what each does. Every call takes the decider's
arguments of :func:`~langgraph_durable.interrupts.aapprove` (``by``, ``roles``,
``approval_id``, ``clock``, ``authorize``) and is authorized and audited the
same way; ``aextend``, ``areassign`` and ``acancel`` are recorded exactly once and
then resume the run (``resume=False``: the next sweep does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.interrupts._approve import decide_env
from langgraph_durable.interrupts._authz import Authorize, policy_of
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._decider_args import DeciderArgs
from langgraph_durable.interrupts._notify import ApprovalEvent
from langgraph_durable.interrupts._operate import amend_flow, cancel_flow, remind_flow
from langgraph_durable.interrupts._perform_async import adrive
from langgraph_durable.interrupts._types import GraphOrSaver


async def aextend(
    graph: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    delta: timedelta | float | None = None,
    until: datetime | None = None,
    comment: str | None = None,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Any:
    """Move a waiting approval's deadline by ``delta`` (negative: earlier) or to ``until``.

    Args:
        graph: The compiled graph; with ``resume=False`` the saver alone.
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        by: The operator (authorized like a decider).
        delta: How much later (a ``timedelta`` or seconds; negative shortens); from
            now when the approval had no deadline.
        until: The new deadline (timezone-aware); give ``delta`` or ``until``.
        comment: Why, kept in the record.
        approval_id, roles, clock, authorize: As :func:`~langgraph_durable.interrupts.aapprove`.
        resume: ``False`` records it; the next sweep resumes the run to ask again.

    Returns:
        What ``graph.ainvoke`` returns (the run asks again with the new deadline);
        with ``resume=False`` the recorded record.

    Raises:
        InvalidInput: neither or both of ``delta``/``until``, or a bad value.
        NotAuthorized, AlreadyDecided, NoPendingApproval, AmbiguousApproval: as ``aapprove``.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = amend_flow(config, decider, action="extend", resume=resume, delta=delta, until=until)
    return await adrive(flow, decide_env(graph, resume))


async def areassign(
    graph: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    to: str | Iterable[str],
    comment: str | None = None,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Any:
    """Ask other approvers (``to``: a label or a list) for a waiting approval.

    Arguments, returns and errors as :func:`aextend`; the deadline stays.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = amend_flow(config, decider, action="reassign", resume=resume, to=to)
    return await adrive(flow, decide_env(graph, resume))


async def acancel(
    graph: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    comment: str | None = None,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Any:
    """Cancel the run waiting at an approval.

    Recorded once like a decision; the node gets ``Decision(type="cancel",
    approved=False)``, and a graph wired with ``add_compensation`` undoes its
    committed steps. Arguments, returns and errors as :func:`aextend`.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = cancel_flow(config, decider, resume=resume)
    return await adrive(flow, decide_env(graph, resume))


async def aremind(
    target: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    comment: str | None = None,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
) -> ApprovalEvent:
    """Remind the approvers of a waiting approval or batch (nothing else changes).

    The reminder is audited, then handed to the notifier set with
    :func:`~langgraph_durable.interrupts.set_notifier`.

    Args:
        target: The compiled graph or its saver.
        config, by, comment, approval_id, roles, clock, authorize: As :func:`aextend`.

    Returns:
        The :class:`~langgraph_durable.interrupts.ApprovalEvent` handed on.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(target, authorize))
    return await adrive(remind_flow(config, decider), decide_env(target, False))
