"""Which approval a decision means: the thread's pending interrupts, or why none is.

A decision names a thread and, optionally, an approval id. These flows find
the pending interrupt it means, and when nothing matches they say why: the
approval was decided before (by whom: :class:`AlreadyDecided`, audited as a
refusal) or was never known (:class:`NoPendingApproval`).
"""

from __future__ import annotations

from typing import Any

from langgraph.types import Interrupt

from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_audit import already_reason, refusal_entry
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    AmbiguousApproval,
    NoPendingApproval,
)
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    GetDecisions,
    GetState,
    RecentStates,
)
from langgraph_durable.interrupts._telemetry import refused_event


def thread_of(config: dict[str, Any]) -> str:
    """The thread id of a run config."""
    try:
        return str(config["configurable"]["thread_id"])
    except (KeyError, TypeError):
        raise ValueError('config must look like {"configurable": {"thread_id": ...}}') from None


def pending_of(state: Any, kind: str) -> list[Interrupt]:
    """The marked interrupts of ``kind`` pending in a graph state snapshot."""
    out: list[Interrupt] = []
    seen: set[str] = set()
    for intr in getattr(state, "interrupts", ()) or ():
        info = extract_wait(intr)
        if info is not None and info.kind == kind and intr.id not in seen:
            seen.add(intr.id)
            out.append(intr)
    return out


def pick_pending(
    thread_id: str, pending: list[Interrupt], approval_id: str | None
) -> Interrupt | None:
    """The one pending interrupt meant; ``None`` when ``approval_id`` is not pending."""
    if approval_id is not None:
        return next((i for i in pending if i.id == approval_id), None)
    if not pending:
        raise NoPendingApproval(thread_id=thread_id)
    if len(pending) > 1:
        raise AmbiguousApproval(thread_id=thread_id, approval_ids=[i.id for i in pending])
    return pending[0]


def not_pending_flow(thread_id: str, approval_id: str) -> Flow[None]:
    """Explain why ``approval_id`` is not pending: decided before, or unknown."""
    got = yield from GetDecisions(thread_id=thread_id, keys=[approval_id])
    if approval_id in got:
        raise AlreadyDecided(
            thread_id=thread_id, approval_id=approval_id, decision=got[approval_id]
        )
    raise NoPendingApproval(thread_id=thread_id, approval_id=approval_id)


RECENT_LOOKBACK = 20


def late_decision_flow(
    config: dict[str, Any], thread_id: str, kind: str = "approval"
) -> Flow[None]:
    """Nothing is pending: if a recent approval was decided, say by whom.

    Raises :class:`AlreadyDecided` for the newest decided approval among the
    thread's recent checkpoints (a timeout that won, typically), else returns.
    """
    states = yield from RecentStates(config=config, limit=RECENT_LOOKBACK)
    for past in states:
        ids = [i.id for i in pending_of(past, kind)]
        if not ids:
            continue
        got = yield from GetDecisions(thread_id=thread_id, keys=ids)
        for approval_id in reversed(ids):
            if approval_id in got:
                raise AlreadyDecided(
                    thread_id=thread_id, approval_id=approval_id, decision=got[approval_id]
                )
        return


def find_pending_flow(
    config: dict[str, Any],
    thread_id: str,
    kind: str,
    approval_id: str | None,
    *,
    by: str,
    action: str,
    clock: Clock | None,
) -> Flow[Interrupt]:
    """The pending interrupt of ``kind`` meant by a decision attempt.

    An attempt on an approval (or batch) decided before is refused with
    :class:`AlreadyDecided` and audited, like every refusal; one on nothing
    known raises :class:`NoPendingApproval` (or :class:`AmbiguousApproval`).
    """
    state = yield from GetState(config=config)
    pending = pending_of(state, kind)
    try:
        if not pending and approval_id is None:
            yield from late_decision_flow(config, thread_id, kind)
        intr = pick_pending(thread_id, pending, approval_id)
        if intr is None:
            assert approval_id is not None
            yield from not_pending_flow(thread_id, approval_id)
            raise AssertionError("unreachable")
    except AlreadyDecided as late:
        entry = refusal_entry(
            thread_id,
            late.approval_id,
            by=by,
            action=action,
            at=now_of(clock),
            fingerprint=(late.decision or {}).get("fingerprint"),
            outcome="already_decided",
            reason=already_reason(late.decision),
        )
        yield from AppendAudit(entries=[entry])
        refused_event(entry)
        raise
    return intr
