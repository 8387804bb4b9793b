"""Who may decide: the authorization check every human decision passes first.

A decision names its decider (``by=``, optional ``roles=``). Before anything is
recorded, the policy in force is asked whether that decider may decide this
request; a refusal raises :class:`NotAuthorized`, records nothing and leaves
the thread waiting. The sweeper's timeout decisions are made by the system and
are not checked (they are recorded with the rule that applied).

The policy is, in order: the ``authorize=`` passed to the call, else the one
set for the graph with :func:`set_authorization`, else :func:`default_authorize`.
Separation of duties (``forbid=["requester"]`` on the request) is checked
whatever the policy.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_config
from langgraph.types import Interrupt

from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts._errors import InterruptsError
from langgraph_durable.interrupts._records import section
from langgraph_durable.interrupts._types import G

REQUESTER = "requester"
"""``forbid=[REQUESTER]``: whoever started the run may not decide its approvals."""

REQUESTED_BY_KEY = "requested_by"
"""``config["configurable"]`` key naming who started the run (LangGraph also keeps it in the
checkpoint metadata)."""


@dataclass(frozen=True)
class Decider:
    """Who is deciding.

    Attributes:
        id: The decider's user id (``by=``).
        roles: Roles the caller vouches the decider holds (``roles=``).
    """

    id: str
    roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthRequest:
    """What is being decided, as the policy sees it.

    Attributes:
        thread_id: The waiting thread.
        approval_id: The interrupt id (a batch's id for batches).
        kind: ``"approval"`` or ``"batch"``.
        request: The payload shown (a batch: its items).
        approvers: Who is asked at the current escalation level; empty means anyone.
        escalation_level: 0 for the first ask.
        requested_by: Who started the run, if the run's config said.
        forbid: Separation-of-duties rules of the request (``["requester"]``).
    """

    thread_id: str
    approval_id: str
    kind: str
    request: Any
    approvers: tuple[str, ...] = ()
    escalation_level: int = 0
    requested_by: str | None = None
    forbid: tuple[str, ...] = field(default_factory=tuple)


Authorize = Callable[[Decider, AuthRequest], bool]
"""A policy: ``True`` when the decider may decide the request."""


class NotAuthorized(InterruptsError, PermissionError):
    """The decider may not decide this request; nothing was recorded.

    Attributes:
        thread_id: The thread (still waiting).
        approval_id: The request refused.
        by: The refused decider.
        approvers: Who may decide it.
        reason: Why the decider was refused.
    """

    def __init__(
        self, *, thread_id: str, approval_id: str, by: str, approvers: Sequence[str], reason: str
    ) -> None:
        self.thread_id = thread_id
        self.approval_id = approval_id
        self.by = by
        self.approvers = list(approvers)
        self.reason = reason
        allowed = ", ".join(self.approvers) or "anyone"
        super().__init__(
            f"{by!r} may not decide approval {approval_id!r} of thread {thread_id!r} "
            f"({reason}); allowed approvers: {allowed}"
        )


def default_authorize(decider: Decider, request: AuthRequest) -> bool:
    """Allow a decider whose id or one of whose roles is among the approvers.

    Anyone may decide a request that names no approvers.
    """
    if not request.approvers:
        return True
    asked = set(request.approvers)
    return decider.id in asked or any(role in asked for role in decider.roles)


_GRAPH_POLICIES: weakref.WeakKeyDictionary[Any, Authorize] = weakref.WeakKeyDictionary()


_SAVER_POLICIES: weakref.WeakKeyDictionary[Any, Authorize] = weakref.WeakKeyDictionary()


def set_authorization(graph: G, authorize: Authorize) -> G:
    """Set the policy for every decision on ``graph``'s threads; returns ``graph``.

    ``approve``/``reject``/``decide`` (and their async twins) on this graph use it
    unless a call passes its own ``authorize=``. A ``Command(resume=...)`` is checked
    inside the node, which knows the run's saver but not the graph: it uses the
    policy set last for a graph compiled with that saver.
    """
    _GRAPH_POLICIES[graph] = authorize
    saver = getattr(graph, "checkpointer", None)
    if saver is not None and not isinstance(saver, bool):
        with contextlib.suppress(TypeError):  # a saver that cannot be weakly referenced
            _SAVER_POLICIES[saver] = authorize
    return graph


def policy_for_saver(saver: Any) -> Authorize:
    """The policy in force for a resume checked inside a node running on ``saver``."""
    try:
        return _SAVER_POLICIES.get(saver) or default_authorize
    except TypeError:
        return default_authorize


def policy_of(graph: Any, authorize: Authorize | None) -> Authorize:
    """The policy in force for a decision on ``graph``."""
    if authorize is not None:
        return authorize
    try:
        return _GRAPH_POLICIES.get(graph) or default_authorize
    except TypeError:  # an object that cannot be weakly referenced
        return default_authorize


def requested_by_of_run() -> str | None:
    """Inside a node: who started the run (``configurable.requested_by``), if known."""
    try:
        config = get_config()
    except RuntimeError:
        return None
    who = (config.get("configurable") or {}).get(REQUESTED_BY_KEY)
    if who is None:
        who = (config.get("metadata") or {}).get(REQUESTED_BY_KEY)
    return None if who is None else str(who)


def thread_of_run() -> str | None:
    """Inside a node: the run's thread id (for error messages), if known."""
    try:
        config = get_config()
    except RuntimeError:
        return None
    thread_id = (config.get("configurable") or {}).get("thread_id")
    return None if thread_id is None else str(thread_id)


def auth_request(thread_id: str, intr: Interrupt, kind: str) -> AuthRequest:
    """The :class:`AuthRequest` of a pending interrupt raised by our helpers."""
    info = extract_wait(intr)
    sec = section(intr.value)
    return AuthRequest(
        thread_id=thread_id,
        approval_id=str(intr.id),
        kind=kind,
        request=sec.get("request", sec.get("items")),
        approvers=tuple(info.approvers) if info else (),
        escalation_level=info.escalation_level if info else 0,
        requested_by=sec.get(REQUESTED_BY_KEY),
        forbid=tuple(sec.get("forbid") or ()),
    )


def check_decider(
    thread_id: str,
    intr: Interrupt,
    kind: str,
    *,
    by: str,
    roles: Sequence[str],
    authorize: Authorize | None,
) -> None:
    """Raise :class:`NotAuthorized` unless ``by`` may decide ``intr``."""
    req = auth_request(thread_id, intr, kind)
    decider = Decider(id=str(by), roles=tuple(str(r) for r in roles))
    if REQUESTER in req.forbid and req.requested_by is not None and decider.id == req.requested_by:
        raise NotAuthorized(
            thread_id=thread_id,
            approval_id=req.approval_id,
            by=decider.id,
            approvers=req.approvers,
            reason="separation of duties: the requester may not decide their own run",
        )
    if not (authorize or default_authorize)(decider, req):
        raise NotAuthorized(
            thread_id=thread_id,
            approval_id=req.approval_id,
            by=decider.id,
            approvers=req.approvers,
            reason=f"not among the approvers at escalation level {req.escalation_level}",
        )
