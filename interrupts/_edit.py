# Generated from interrupts/_edit_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``edit`` / ``respond``: the two decisions beside approve and reject, from the operator side.

An **edit** approves with changed arguments: the node's
:class:`~langgraph_durable.interrupts.Decision` carries them in ``edited`` (what
was approved is what runs), the record and the audit entry fingerprint the
edited version and the audit reason names both fingerprints. A **respond**
answers the agent with text instead of a yes or no (``Decision.response``; not
approved). Each must be allowed by the request (``allowed_decisions``). Both are
recorded exactly like ``approve()``: authorized, compare-and-set once, audited,
then the run resumes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph_durable.interrupts._approve import decide_approval_flow, decide_env
from langgraph_durable.interrupts._authz import Authorize, policy_of
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._decider_args import DeciderArgs
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._inputs import check_text
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._shapes import action_args
from langgraph_durable.interrupts._types import GraphOrSaver


def _edit_answer(args: Any) -> dict[str, Any]:
    try:
        json.dumps(args)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(parameter="args", reason=f"must be JSON-able: {exc}") from None
    return {"type": "edit", "args": action_args(args), "message": None}


def _respond_answer(text: Any) -> dict[str, Any]:
    message = check_text(text, "text")
    if not message:
        raise InvalidInput(parameter="text", reason="is empty: a response is a text answer")
    return {"type": "respond", "args": None, "message": message}


def _decide_flow(
    config: dict[str, Any], answer: dict[str, Any], decider: DeciderArgs, resume: bool
) -> Flow[Any]:
    return decide_approval_flow(
        config,
        approved=answer["type"] == "edit",
        resume=resume,
        answer=answer,
        **decider.as_kwargs(),
    )


def edit(
    graph: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    args: Any,
    comment: str | None = None,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Any:
    """Approve the thread's pending approval with changed arguments, and resume the run.

    Args:
        graph: The compiled graph (with its saver); with ``resume=False`` the saver alone.
        config: ``{"configurable": {"thread_id": ...}}`` of the waiting thread.
        by: Who decides (a non-empty string).
        args: The arguments to run instead of the request (JSON-able, in the
            request's own form: a dict for a dict request).
        comment: Free text kept with the decision.
        approval_id: Which approval, when the thread has several pending.
        roles: Roles the decider holds (for authorization policies).
        clock: Time source for the decision time and the resumed run.
        authorize: Policy for this call (see :func:`~langgraph_durable.interrupts.approve`).
        resume: ``False`` records the decision; the next sweep resumes the run.

    Returns:
        What ``graph.invoke`` returns for the resumed run; with ``resume=False``,
        the recorded :class:`~langgraph_durable.interrupts.Decision`.

    Raises:
        DecisionNotAllowed: the request does not allow ``"edit"`` (nothing recorded).
        InvalidInput, NotAuthorized, AlreadyDecided: as
            :func:`~langgraph_durable.interrupts.approve`.
        NoPendingApproval, AmbiguousApproval: as
            :func:`~langgraph_durable.interrupts.approve`.
    """
    answer = _edit_answer(args)
    decider = DeciderArgs(by, comment, approval_id, roles, clock, policy_of(graph, authorize))
    return drive(_decide_flow(config, answer, decider, resume), decide_env(graph, resume))


def respond(
    graph: GraphOrSaver,
    config: dict[str, Any],
    *,
    by: str,
    text: str,
    approval_id: str | None = None,
    roles: Sequence[str] = (),
    clock: Clock | None = None,
    authorize: Authorize | None = None,
    resume: bool = True,
) -> Any:
    """Answer the thread's pending approval with text for the agent, and resume the run.

    The node gets ``Decision(type="respond", approved=False, response=text)``.
    Arguments, returns and errors as :func:`edit` (``DecisionNotAllowed`` when
    the request does not allow ``"respond"``).
    """
    answer = _respond_answer(text)
    decider = DeciderArgs(by, None, approval_id, roles, clock, policy_of(graph, authorize))
    return drive(_decide_flow(config, answer, decider, resume), decide_env(graph, resume))
