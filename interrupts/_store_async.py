"""Where decisions and claims live: the saver's own fast path, or in process.

Our savers implement :class:`~langgraph_durable.checkpointers.AsyncWaitIndex`,
the ``AsyncWaitClaims`` and ``AsyncDecisionStore`` protocols in storage. Any
other LangGraph saver gets the fallback of
:mod:`~langgraph_durable.interrupts._store_memory`: pending waits are found by
scanning ``saver.alist(None)`` and decisions and claims are compare-and-set in
process memory, which is exactly as durable as an in-memory saver and correct
for many threads of one process. The audit trail
(:class:`~langgraph_durable.checkpointers.AsyncAuditLog`) falls back the same
way: an in-process list per saver, gone with the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.checkpointers import (
    AsyncAuditLog,
    AsyncDecisionStore,
    AsyncWaitClaims,
    AsyncWaitIndex,
    AuditLog,
    DecisionStore,
    WaitClaims,
    WaitEntry,
    WaitIndex,
    feature,
)
from langgraph_durable.interrupts._store_memory import count, memory
from langgraph_durable.interrupts._store_view import in_thread  # async-only
from langgraph_durable.interrupts._wait_entries import entries_from_tuples, filter_entries

# (thread_id, key, decision, audit entry or None): one compare-and-set of a batch
DecisionItem = tuple[str, str, dict[str, Any], "dict[str, Any] | None"]


def _item_kwargs(item: DecisionItem) -> dict[str, Any]:
    thread_id, key, decision, audit = item
    return {"thread_id": thread_id, "key": key, "decision": decision, "audit": audit}


class AsyncBackend:
    """Decisions, claims and the wait index for one saver.

    Attributes:
        indexed, claims, decisions, audit: Whether the saver implements the
            wait index, the wait claims, the decision store, the audit log
            protocol (storage that every process shares).
        atomic_audit: Whether the part that records decisions keeps the audit
            log too, so a decision and its entry are stored in one unit.
    """

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.mem = memory(saver)
        # the parts of the saver that implement each protocol (the saver or one of its stores)
        self._index: AsyncWaitIndex | None = feature(saver, AsyncWaitIndex)
        self._claims: AsyncWaitClaims | None = feature(saver, AsyncWaitClaims)
        self._decisions: AsyncDecisionStore | None = feature(saver, AsyncDecisionStore)
        self._audit: AsyncAuditLog | None = feature(saver, AsyncAuditLog)
        self.indexed = self._index is not None
        self.claims = self._claims is not None
        self.decisions = self._decisions is not None
        self.audit = self._audit is not None
        self.atomic_audit = self.decisions and self.audit
        self._in_threads(saver)  # async-only

    def _in_threads(self, saver: BaseCheckpointSaver[Any]) -> None:  # async-only
        """Give the async protocols a saver lacks the view of its sync ones (a thread each call).

        Our sync savers also answer LangGraph's async checkpoint calls, so async
        flows run on them: their decisions and claims go to storage in a worker
        thread, never to this process's memory (a decision or claim kept there
        is lost with the process and does not exclude other processes).
        """
        self._index = in_thread(self._index, feature(saver, WaitIndex))
        self._claims = in_thread(self._claims, feature(saver, WaitClaims))
        self._audit = in_thread(self._audit, feature(saver, AuditLog))
        if self._decisions is None:
            self._decisions = in_thread(None, feature(saver, DecisionStore))
            # record_decision takes audit= when the sync part keeps the audit log too
            sync_audit = feature(saver, AuditLog) is not None
            self.atomic_audit = self._decisions is not None and sync_audit

    # -- decisions ---------------------------------------------------------------------
    async def arecord_decision(
        self,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """CAS ``decision``; ``audit`` is appended with it (atomically where the saver can)."""
        if self._decisions is None:
            return self.mem.record(thread_id, key, decision, audit)
        if self.atomic_audit and audit is not None:
            # a saver that keeps the audit log too appends the entry in the same atomic unit
            # (its arecord_decision takes audit=; the protocol leaves it out for the others)
            return await self._decisions.arecord_decision(  # type: ignore[call-arg]
                thread_id=thread_id, key=key, decision=decision, audit=audit
            )
        stored: dict[str, Any] = await self._decisions.arecord_decision(
            thread_id=thread_id, key=key, decision=decision
        )
        if audit is not None and stored.get("decision_id") == decision["decision_id"]:
            await self.aappend_audit([audit])
        return stored

    async def arecord_decisions(self, items: Sequence[DecisionItem]) -> list[dict[str, Any]]:
        """CAS several decisions (each with its audit entry); the stored ones, in order.

        On a saver with ``arecord_decisions`` one round trip (Postgres: one
        transaction; Redis: one pipeline of per-thread scripts); elsewhere one
        :meth:`arecord_decision` each.
        """
        batch = getattr(self._decisions, "arecord_decisions", None) if self.atomic_audit else None
        if batch is None:
            return [await self.arecord_decision(*item) for item in items]
        return list(await batch(items=[_item_kwargs(item) for item in items]))

    async def aget_decisions(
        self, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        if self._decisions is not None:
            return await self._decisions.aget_decisions(thread_id=thread_id, keys=list(keys))
        return self.mem.get(thread_id, keys)

    async def acount_decisions(self, thread_id: str, keys: Sequence[str]) -> int:
        if self._decisions is not None:
            return await self._decisions.acount_decisions(thread_id=thread_id, keys=list(keys))
        return len(self.mem.get(thread_id, keys))

    # -- the audit trail ------------------------------------------------------------------
    async def aappend_audit(self, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (the saver's log, or the in-process one)."""
        if self._audit is not None:
            await self._audit.aappend_audit(entries=list(entries))
        else:
            self.mem.append(entries)

    async def aread_audit(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's entries, in order."""
        if self._audit is not None:
            return await self._audit.aread_audit(thread_id=thread_id)
        return self.mem.read(thread_id)

    async def apurge_audit(self, thread_id: str) -> int:
        """Retention: delete the thread and its entries."""
        if self._audit is not None:
            return int(await self._audit.apurge_audit(thread_id=thread_id))
        await self.saver.adelete_thread(thread_id)
        return self.mem.purge(thread_id)

    # -- the wait index --------------------------------------------------------------------
    async def _ascan(self) -> list[WaitEntry]:
        return entries_from_tuples([t async for t in self.saver.alist(None)])

    async def alist_waits(self, **filters: Any) -> list[WaitEntry]:
        if self._index is not None and "kinds" not in filters:
            return await self._index.alist_waits(**filters)
        return filter_entries(await self._ascan(), **filters)

    # -- claims ----------------------------------------------------------------------------
    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        if self._claims is not None:
            return await self._claims.aclaim_due_waits(
                now=now, owner=owner, lease=lease, limit=limit, kinds=kinds
            )
        return self.mem.claim(await self._ascan(), now, owner, lease, limit, kinds)

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        if self._claims is not None:
            await self._claims.arelease_wait_claim(
                thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
            )
        else:
            self.mem.release(thread_id, interrupt_id, owner, done)

    # -- health ----------------------------------------------------------------------------
    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        if self._claims is not None:
            return await self._claims.await_counts(now=now, kinds=kinds)
        return count(await self._ascan(), now, kinds)
