"""The audit trail: who tried to decide what, and what happened.

Every decision attempt (allowed or refused), every timeout and escalation the
sweeper applies, every stale re-ask and every compensation step is appended to
an append-only log in the saver's own storage (Postgres: the ``durable_audit``
table, written only through the schema's own functions, whose triggers refuse
every other write; Redis: a stream per thread in the thread's hash slot). Our
savers chain each entry to the one before it; ``verify_audit``
(:mod:`~langgraph_durable.interrupts._audit_calls_async`, with the calls that
read and purge a trail) checks the chain and names the first broken link. A
decision's entry is written in the same atomic unit as the decision, so a
recorded decision never lacks its entry; refused attempts are written on their
own (nothing else is recorded then). Entries written from
inside a node (a request raised, a stale re-ask, an undo) carry a dedupe key,
because a node re-runs on every resume.

Entries hold the request's fingerprint, never the request: payloads are stored
once, in the checkpoint.

With any other LangGraph saver (``InMemorySaver``) the log is kept in process
memory next to the in-process decisions: exactly as durable as that saver, and
gone with the process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from langgraph.errors import GraphInterrupt
from langgraph.types import interrupt
from pydantic import BaseModel

from langgraph_durable.checkpointers import (
    AsyncAuditLog,
    DeferredAudit,
    audit_entry,
    feature,
)
from langgraph_durable.interrupts._clock import utc_now
from langgraph_durable.interrupts._pregel import CONFIG_KEY_CHECKPOINTER, current_task
from langgraph_durable.interrupts._store import Backend
from langgraph_durable.interrupts._store_async import AsyncBackend

log = logging.getLogger("langgraph_durable.interrupts.audit")

# what an entry's `action` says
APPROVE, REJECT, DECIDE, ESCALATE, REQUEST, REASK, UNDO = (
    "approve",
    "reject",
    "decide",
    "escalate",
    "request",
    "reask",
    "undo",
)
# what an entry's `outcome` says
RECORDED = "recorded"
NOT_AUTHORIZED = "not_authorized"
ALREADY_DECIDED = "already_decided"
UNKNOWN_ITEM = "unknown_item"
WAITING = "waiting"
STALE = "stale"
COMPENSATED = "compensated"
FAILED = "failed"


class AuditEntry(BaseModel):
    """One entry of a thread's audit trail (JSON-able: ``entry.model_dump(mode="json")``).

    Attributes:
        seq: Orders the entries (increasing per store; gaps are normal).
        at: When it happened (UTC; the deciding call's or the sweeper's clock).
        thread_id: The thread.
        checkpoint_ns: The graph namespace, when the writer knew it (``""``: root).
        approval_id: The approval (interrupt id; a batch's id), if any.
        item: A batch item key, or the compensation step id.
        actor: Who: the decider's id, ``"system"`` for the sweeper and the
            compensation node, the run's ``requested_by`` for a request.
        action: ``approve``, ``reject``, ``decide`` (a batch attempt refused as a
            whole), ``escalate``, ``request``, ``reask`` or ``undo``.
        fingerprint: sha256 of the request payload (never the payload).
        outcome: ``recorded``, ``not_authorized``, ``already_decided``,
            ``unknown_item``, ``waiting`` (a request raised), ``stale``,
            ``compensated`` or ``failed``.
        reason: Why: the rule that applied, the refusal, who decided first.
    """

    seq: int
    at: datetime
    thread_id: str
    checkpoint_ns: str = ""
    approval_id: str | None = None
    item: str | None = None
    actor: str
    action: str
    fingerprint: str | None = None
    outcome: str
    reason: str | None = None


def audit_entries(rows: Sequence[dict[str, Any]]) -> list[AuditEntry]:
    """Stored entries as models (without the dedupe key, which is the writer's)."""
    return [
        AuditEntry.model_validate({k: v for k, v in r.items() if k != "dedupe_key"}) for r in rows
    ]


# -- entries written from inside a node ----------------------------------------------

_PENDING: set[asyncio.Task[Any]] = set()


def _node_target(config: Any) -> tuple[Any, str, str] | None:
    ctx = current_task(config)
    if ctx is None or ctx.thread_id is None:
        return None
    saver = ctx.configurable.get(CONFIG_KEY_CHECKPOINTER)
    if saver is None:
        return None
    return saver, ctx.thread_id, ctx.parent_ns


def _node_entry(target: tuple[Any, str, str], fields: dict[str, Any]) -> dict[str, Any]:
    _, thread_id, ns = target
    return audit_entry(
        at=fields.pop("at", None) or utc_now(), thread_id=thread_id, checkpoint_ns=ns, **fields
    )


def node_audit(config: Any = None, **fields: Any) -> None:
    """Append an entry from inside a node (needs ``dedupe_key=``: nodes re-run).

    Outside a graph, or without a checkpointer, nothing is written. In an async
    node running on an async saver's own event loop (a sync call there would
    block it), the entry is handed to the saver, which writes it before its
    next write: the one that stores the interrupt the entry is about, which
    ``ainvoke`` awaits. So the entry is durable once the interrupt is, even if
    the event loop ends right after the run.
    """
    target = _node_target(config)
    if target is None:
        return
    entry = _node_entry(target, fields)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    deferred = feature(target[0], DeferredAudit) if loop is not None else None
    if deferred is not None:
        deferred.defer_audit(entries=[entry])
        return
    if loop is not None and feature(target[0], AsyncAuditLog) is not None:
        # another saver's async log: best effort, on its loop
        task = loop.create_task(AsyncBackend(target[0]).aappend_audit([entry]))
        _PENDING.add(task)
        task.add_done_callback(_done)
        return
    Backend(target[0]).append_audit([entry])


def _done(task: asyncio.Task[Any]) -> None:
    _PENDING.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("audit entry from a node was not written", exc_info=task.exception())


async def anode_audit(config: Any = None, **fields: Any) -> None:
    """Async twin of :func:`node_audit` (awaits the append)."""
    target = _node_target(config)
    if target is None:
        return
    await AsyncBackend(target[0]).aappend_audit([_node_entry(target, fields)])


def ask(
    value: dict[str, Any],
    *,
    at: datetime,
    actor: str | None,
    fingerprint: str | None,
    approvers: Sequence[str],
    deadline: datetime | None,
    level: int,
    refuse: Callable[[], Exception | None] | None = None,
) -> Any:
    """``interrupt(value)``, auditing the request when it is raised (once per interrupt id).

    ``refuse``: asked only when the request is raised (not when an answer is
    replayed); an error it returns is raised instead, so nothing is asked.
    """
    try:
        return interrupt(value)
    except GraphInterrupt as exc:
        raised = [
            intr
            for intr in (exc.args[0] if exc.args else ()) or ()
            if getattr(intr, "value", None) is value
        ]
        problem = refuse() if raised and refuse is not None else None
        if problem is not None:
            raise problem from None
        for intr in raised:
            when = deadline.isoformat() if deadline is not None else "none"
            node_audit(
                at=at,
                approval_id=str(intr.id),
                actor=actor or "run",
                action=REQUEST,
                fingerprint=fingerprint,
                outcome=WAITING,
                reason=f"asked {', '.join(approvers) or 'anyone'} at level {level}; "
                f"deadline {when}",
                dedupe_key=f"request:{intr.id}",
            )
        raise
