"""The audit trail: the shape of an entry and the protocol of the savers' log.

Every decision attempt on an approval (allowed or refused), every timeout,
escalation, stale re-ask and compensation step is appended to an append-only
log in the saver's own storage. An entry is a JSON-able dict::

    {
      "at": "2026-…+00:00",        # when it happened (the caller's clock), ISO UTC
      "thread_id": "refund-7",
      "checkpoint_ns": "",         # the task namespace, when the writer knows it
      "approval_id": "…",          # the interrupt id (a batch's id), or None
      "item": None,                # a batch item key, or a compensation step id
      "actor": "alice",            # who; "system" for the sweeper's timeout rules
      "action": "approve",         # approve | reject | escalate | request | reask | undo
      "fingerprint": "sha256:…",   # of the request payload: never the payload itself
      "outcome": "recorded",       # recorded | not_authorized | already_decided | …
      "reason": None,              # why (the rule that applied, the refusal)
      "dedupe_key": None,          # entries written from a node, which may re-run:
                                   # the second append with the same key is a no-op
    }

Stores add ``seq``: a per-store increasing number that orders a thread's
entries. Entries are never updated; they are deleted only by the explicit
retention call (:meth:`AuditLog.purge_audit`), never by ``delete_thread``.
Our savers also chain each entry to the one before it (see
:mod:`~langgraph_durable.checkpointers._audit_chain`) and check that chain
(:class:`VerifiableAudit`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langgraph_durable.checkpointers._audit_chain import AuditVerification

AUDIT_FIELDS = (
    "at",
    "thread_id",
    "checkpoint_ns",
    "approval_id",
    "item",
    "actor",
    "action",
    "fingerprint",
    "outcome",
    "reason",
    "dedupe_key",
)
"""The fields of an audit entry, in storage order (``seq`` comes first when read)."""


def audit_entry(
    *,
    at: datetime,
    thread_id: str,
    actor: str,
    action: str,
    outcome: str,
    approval_id: str | None = None,
    item: str | None = None,
    fingerprint: str | None = None,
    reason: str | None = None,
    checkpoint_ns: str = "",
    dedupe_key: str | None = None,
) -> dict[str, Any]:
    """A new audit entry (a plain JSON-able dict, see the module docstring).

    Raises:
        ValueError: ``at`` is naive.
    """
    if at.tzinfo is None:
        raise ValueError("audit entry time must be timezone-aware (UTC)")
    return {
        "at": at.isoformat(),
        "thread_id": str(thread_id),
        "checkpoint_ns": str(checkpoint_ns or ""),
        "approval_id": None if approval_id is None else str(approval_id),
        "item": None if item is None else str(item),
        "actor": str(actor),
        "action": str(action),
        "fingerprint": fingerprint,
        "outcome": str(outcome),
        "reason": reason,
        "dedupe_key": dedupe_key,
    }


@runtime_checkable
class AuditLog(Protocol):
    """An append-only audit log kept next to the checkpoints (our savers).

    Our savers also accept ``audit=`` on
    :meth:`~langgraph_durable.checkpointers.DecisionStore.record_decision`: that entry is appended
    in the same atomic unit as the decision, and only if this call stored the
    decision, so a recorded decision never lacks its entry.
    """

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append ``entries`` (one atomic unit per thread; ``dedupe_key`` ones at most once)."""
        ...

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's entries in order, each with its ``seq``."""
        ...

    def purge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit entries; return how many entries went."""
        ...


@runtime_checkable
class AsyncAuditLog(Protocol):
    """Async twin of :class:`AuditLog`."""

    async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """See :meth:`AuditLog.append_audit`."""
        ...

    async def aread_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """See :meth:`AuditLog.read_audit`."""
        ...

    async def apurge_audit(self, *, thread_id: str) -> int:
        """See :meth:`AuditLog.purge_audit`."""
        ...


@runtime_checkable
class VerifiableAudit(Protocol):
    """An audit log whose entries are hash-chained (our savers)."""

    def verify_audit(self, *, thread_id: str) -> AuditVerification:
        """Check the thread's chain; the report names the first broken link."""
        ...


@runtime_checkable
class AsyncVerifiableAudit(Protocol):
    """Async twin of :class:`VerifiableAudit`."""

    async def averify_audit(self, *, thread_id: str) -> AuditVerification:
        """See :meth:`VerifiableAudit.verify_audit`."""
        ...


@runtime_checkable
class DeferredAudit(Protocol):
    """An async saver that takes entries from code that cannot await (our async savers).

    A sync helper called inside an async node (``request_approval`` in an
    ``async def`` node) runs on the saver's event loop, where it can neither
    block on the saver nor await it. It hands its entry over with
    :meth:`defer_audit` (no I/O); the saver writes it before its next write of
    checkpoints or pending writes, which is the write that stores the interrupt
    the entry is about (``ainvoke`` awaits it before it returns).
    """

    def defer_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Queue ``entries``; they are appended before the saver's next write."""
        ...


class _Deferred:
    __slots__ = ("entries", "lock")

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.lock = asyncio.Lock()


class DeferredAuditMixin:
    """:class:`DeferredAudit` for an async saver with ``aappend_audit``.

    The saver calls :meth:`awrite_deferred_audit` at the start of ``aput`` and
    ``aput_writes``. A write that finds an append of queued entries in flight
    waits for it, so no interrupt is stored before the entries queued ahead of
    it; a failed append keeps the entries queued and fails the write.
    """

    if TYPE_CHECKING:

        async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None: ...

    def defer_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Queue ``entries`` (call on the saver's event loop); see :class:`DeferredAudit`."""
        queue: _Deferred | None = self.__dict__.get("_deferred_audit")
        if queue is None:
            queue = self.__dict__["_deferred_audit"] = _Deferred()
        queue.entries.extend(entries)

    async def awrite_deferred_audit(self) -> None:
        """Append the queued entries (the saver's writes call it first); none queued: no I/O."""
        queue: _Deferred | None = self.__dict__.get("_deferred_audit")
        if queue is None:  # nothing was ever deferred: the hot path
            return
        async with queue.lock:
            batch = list(queue.entries)
            if batch:
                await self.aappend_audit(entries=batch)
                del queue.entries[: len(batch)]
