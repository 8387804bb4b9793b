# Generated from interrupts/_decision_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``approve`` / ``reject``: decide the thread's pending approval, then resume the run.

The decision flow itself (find, authorize, compare-and-set, audit, resume) is
:func:`~langgraph_durable.interrupts._approve.decide_approval_flow`; these calls
build it from the decider's arguments and drive it against the graph or saver.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph_durable.interrupts._approve import decide_approval_flow, decide_env
from langgraph_durable.interrupts._authz import Authorize, policy_of
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._decider_args import DeciderArgs
from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._shapes import action_args
from langgraph_durable.interrupts._types import GraphOrSaver


def _rejection(edited: Any) -> dict[str, Any] | None:
    if edited is None:
        return None
    try:
        json.dumps(edited)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(parameter="edited", reason=f"must be JSON-able: {exc}") from None
    return {"type": "reject", "args": action_args(edited), "message": None}


def approve(
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
    """Approve the thread's pending approval and resume the run.

    Args:
        graph: The compiled graph (with its saver). With ``resume=False`` the saver
            alone will do: a process that does not host the graph (an approval UI)
            records the decision and a worker resumes the run.
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        by: Who approves (a non-empty string).
        comment: Free text kept in the :class:`~langgraph_durable.interrupts.Decision`.
        approval_id: Which approval, when the thread has several pending.
        roles: Roles the decider holds (for authorization policies); a string is one role.
        clock: Time source for the decision time and the resumed run.
        authorize: Policy for this call; default: the graph's (``set_authorization``),
            else the decider's id or a role must be among the request's approvers.
        resume: ``False`` records the decision (exactly once, as always) without
            resuming: the next :class:`~langgraph_durable.interrupts.ApprovalSweeper` pass (or the
            ``worker``/``sweep`` command) resumes the run with it, at once, whatever
            the sweeper's lease.

    Returns:
        What ``graph.invoke`` returns for the resumed run; with ``resume=False``,
        the recorded :class:`~langgraph_durable.interrupts.Decision`, and also when
        the saver's multitask strategy turns the resume away because another run
        holds the thread (logged; a sweep resumes the run with the decision).

    Raises:
        InvalidInput: ``by``, ``comment``, ``roles`` or ``approval_id`` is not text
            every backend stores (a NUL, a lone surrogate, not a string): nothing
            is recorded, the approval still waits.
        NotAuthorized: the decider may not decide it (nothing recorded, still waiting).
        AlreadyDecided: somebody, or the timeout, decided first.
        NoPendingApproval: nothing (with that id) is waiting.
        AmbiguousApproval: several approvals wait and ``approval_id`` was not given.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    flow = decide_approval_flow(config, approved=True, resume=resume, **decider.as_kwargs())
    return drive(flow, decide_env(graph, resume))


def reject(
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
    edited: Any = None,
) -> Any:
    """Reject the thread's pending approval and resume the run; see :func:`approve`.

    ``edited``: arguments the decider would accept instead (JSON-able, in the
    request's form), kept with the rejection (``Decision.edited``) and fingerprinted
    in the audit entry beside the request's; the run is not approved.
    """
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    answer = _rejection(edited)
    flow = decide_approval_flow(
        config, approved=False, resume=resume, answer=answer, **decider.as_kwargs()
    )
    return drive(flow, decide_env(graph, resume))
