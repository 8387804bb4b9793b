# Generated from interrupts/_operator_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The operator calls on a waiting approval: ``extend``, ``reassign``, ``remind``, ``cancel``.

See :mod:`._operate` for what each does. Every call takes the decider's
arguments of :func:`~langgraph_durable.interrupts.approve` (``by``, ``roles``,
``approval_id``, ``clock``, ``authorize``) and is authorized and audited the
same way; ``extend``, ``reassign`` and ``cancel`` are recorded exactly once and
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
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._types import GraphOrSaver


def extend(
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
        approval_id, roles, clock, authorize: As :func:`~langgraph_durable.interrupts.approve`.
        resume: ``False`` records it; the next sweep resumes the run to ask again.

    Returns:
        What ``graph.invoke`` returns (the run asks again with the new deadline);
        with ``resume=False`` the recorded record.

    Raises:
        InvalidInput: neither or both of ``delta``/``until``, or a bad value.
        NotAuthorized, AlreadyDecided, NoPendingApproval, AmbiguousApproval: as ``approve``.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = amend_flow(config, decider, action="extend", resume=resume, delta=delta, until=until)
    return drive(flow, decide_env(graph, resume))


def reassign(
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

    Arguments, returns and errors as :func:`extend`; the deadline stays.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = amend_flow(config, decider, action="reassign", resume=resume, to=to)
    return drive(flow, decide_env(graph, resume))


def cancel(
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
    committed steps. Arguments, returns and errors as :func:`extend`.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = cancel_flow(config, decider, resume=resume)
    return drive(flow, decide_env(graph, resume))


def remind(
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
        config, by, comment, approval_id, roles, clock, authorize: As :func:`extend`.

    Returns:
        The :class:`~langgraph_durable.interrupts.ApprovalEvent` handed on.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(target, authorize))
    return drive(remind_flow(config, decider), decide_env(target, False))
