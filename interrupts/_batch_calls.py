# Generated from interrupts/_batch_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``decide``: decide any subset of a pending batch's items, then resume the run.

The batch flow itself (find, authorize, compare-and-set each item, complete,
resume) is :func:`~langgraph_durable.interrupts._batch.decide_flow`; this call
builds it from the decider's arguments and drives it against the graph or saver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_durable.interrupts._approve import decide_env
from langgraph_durable.interrupts._authz import Authorize, policy_of
from langgraph_durable.interrupts._batch import decide_flow
from langgraph_durable.interrupts._batch_models import DecideResult
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._telemetry import approval_attributes, traced_flow
from langgraph_durable.interrupts._types import GraphOrSaver


def decide(
    graph: GraphOrSaver,
    config: dict[str, Any],
    decisions: Mapping[Any, Any],
    *,
    by: str,
    comment: str | None = None,
    batch_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> DecideResult:
    """Decide any subset of a pending batch's items (``{key: decision}``).

    Each item is recorded once (compare-and-set per item). When this call decides
    the last open item, it resumes the run and returns its result.

    Args:
        graph: The compiled graph (with its saver). With ``resume=False`` the saver
            alone will do (a process that does not host the graph).
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        decisions: ``{item key: decision}`` for any subset of the open items; a
            decision is ``True``/``False``, ``"approve"``/``"reject"``,
            ``{"type": "edit", "args": <the item to act on>}`` or
            ``{"type": "respond", "message": "..."}`` (edit and respond where the
            batch's ``allowed_decisions`` allow them; anything else is refused, not
            read as truthy).
        by: Who decides (a non-empty string).
        comment: Free text kept with each item's decision.
        batch_id: Which batch, when the thread has several pending.
        roles: Roles the decider holds (for authorization policies); a string is one role.
        clock: Time source for the decision time and the resumed run.
        authorize: Policy for this call (see :func:`~langgraph_durable.interrupts.approve`).
        resume: ``False`` records the decisions (exactly once, as always) without
            resuming: a call that decides the last open item records the batch's
            completion (:attr:`DecideResult.deferred`) and the next
            :class:`~langgraph_durable.interrupts.ApprovalSweeper` pass (or the ``worker``/``sweep``
            command) resumes the run with it, at once, whatever the sweeper's lease.

    Raises:
        InvalidInput: a decision is not ``True``/``False``, or ``by``, ``comment``,
            ``roles``, a key or ``batch_id`` is not text every backend stores
            (names it and the item; nothing is recorded).
        UnknownBatchItem: a key is not in the batch (nothing is recorded).
        NotAuthorized: the decider may not decide this batch (nothing is recorded).
        AlreadyDecided: every item of the call was already decided by someone else
            (when only some were, or when the call still completed the batch and
            resumed the run, see :attr:`DecideResult.already_decided`); or
            ``batch_id`` names a batch completed before. Audited, as refusals are.
        NoPendingApproval: no batch (with that id) is waiting on the thread.
    """
    flow = decide_flow(
        config,
        decisions,
        by=by,
        comment=comment,
        batch_id=batch_id,
        roles=roles,
        clock=clock,
        authorize=policy_of(graph, authorize),
        resume=resume,
    )
    attrs = approval_attributes((config.get("configurable") or {}).get("thread_id"), batch_id)
    flow = traced_flow("approval.decide", flow, attrs)
    return drive(flow, decide_env(graph, resume))
