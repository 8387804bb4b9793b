"""Where decisions and claims live: the saver's own fast path, or in process.

Our savers implement :class:`~langgraph_durable.checkpointers.WaitIndex`,
the ``WaitClaims`` and ``DecisionStore`` protocols
(and their async twins) in storage. Any other LangGraph saver gets the fallback
here: pending waits are found by scanning ``saver.list(None)`` and decisions and
claims are compare-and-set in process memory, which is exactly as durable as an
in-memory saver and correct for many threads of one process. The audit trail
(:class:`~langgraph_durable.checkpointers.AuditLog`) falls back the same way: an in-process list
per saver, gone with the process.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

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
from langgraph_durable.interrupts._wait_entries import entries_from_tuples, filter_entries


class _MemoryState:
    """Decisions and claims of one saver, in this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.decisions: dict[tuple[str, str], dict[str, Any]] = {}
        # (thread_id, interrupt_id) -> (owner, until, done)
        self.claims: dict[tuple[str, str], tuple[str, datetime, bool]] = {}
        # the audit trail of savers without their own (not durable)
        self.audit: list[dict[str, Any]] = []
        self.audit_keys: set[tuple[str, str]] = set()
        self.audit_seq = itertools.count(1)


_MEMORY: weakref.WeakKeyDictionary[Any, _MemoryState] = weakref.WeakKeyDictionary()
_MEMORY_LOCK = threading.Lock()


def _memory(saver: Any) -> _MemoryState:
    with _MEMORY_LOCK:
        state = _MEMORY.get(saver)
        if state is None:
            state = _MEMORY[saver] = _MemoryState()
        return state


def _decision_age_ok(decision: dict[str, Any] | None, now: datetime, lease: timedelta) -> bool:
    if not decision or not decision.get("at"):
        return False
    if decision.get("deferred"):
        return True  # nobody is resuming it: claimable at once
    return datetime.fromisoformat(decision["at"]) + lease <= now


# (thread_id, key, decision, audit entry or None): one compare-and-set of a batch
DecisionItem = tuple[str, str, dict[str, Any], "dict[str, Any] | None"]


def _item_kwargs(item: DecisionItem) -> dict[str, Any]:
    thread_id, key, decision, audit = item
    return {"thread_id": thread_id, "key": key, "decision": decision, "audit": audit}


class Backend:
    """Decisions, claims and the wait index for one saver, sync and async."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        # the parts of the saver that implement each protocol (the saver or one of its stores)
        self._parts: dict[type, Any] = {
            proto: feature(saver, proto)
            for proto in (
                WaitIndex,
                AsyncWaitIndex,
                WaitClaims,
                AsyncWaitClaims,
                DecisionStore,
                AsyncDecisionStore,
                AuditLog,
                AsyncAuditLog,
            )
        }
        self.indexed = self._parts[WaitIndex] is not None
        self.aindexed = self._parts[AsyncWaitIndex] is not None
        self.claims = self._parts[WaitClaims] is not None
        self.aclaims = self._parts[AsyncWaitClaims] is not None
        self.decisions = self._parts[DecisionStore] is not None
        self.adecisions = self._parts[AsyncDecisionStore] is not None
        self.audit = self._parts[AuditLog] is not None
        self.aaudit = self._parts[AsyncAuditLog] is not None
        self.mem = _memory(saver)
        # A saver with only the sync protocol (our sync savers also answer
        # LangGraph's async checkpoint calls, so async flows run on them): the
        # async calls below go to the sync protocol in a worker thread, never
        # to this process's memory (a decision or claim kept there is lost with
        # the process and does not exclude other processes).
        self.decisions_sync_only = self.decisions and not self.adecisions
        self.claims_sync_only = self.claims and not self.aclaims
        self.indexed_sync_only = self.indexed and not self.aindexed

    # -- the saver seen through the protocols __init__ found on it -------------------
    @property
    def _decisions(self) -> DecisionStore:
        # only called where __init__ found the protocol
        return cast(DecisionStore, self._parts[DecisionStore])

    @property
    def _adecisions(self) -> AsyncDecisionStore:
        # only called where __init__ found the protocol
        return cast(AsyncDecisionStore, self._parts[AsyncDecisionStore])

    @property
    def _audit(self) -> AuditLog:
        # only called where __init__ found the protocol
        return cast(AuditLog, self._parts[AuditLog])

    @property
    def _aaudit(self) -> AsyncAuditLog:
        # only called where __init__ found the protocol
        return cast(AsyncAuditLog, self._parts[AsyncAuditLog])

    @property
    def _index(self) -> WaitIndex:
        # only called where __init__ found the protocol
        return cast(WaitIndex, self._parts[WaitIndex])

    @property
    def _aindex(self) -> AsyncWaitIndex:
        # only called where __init__ found the protocol
        return cast(AsyncWaitIndex, self._parts[AsyncWaitIndex])

    @property
    def _claims(self) -> WaitClaims:
        # only called where __init__ found the protocol
        return cast(WaitClaims, self._parts[WaitClaims])

    @property
    def _aclaims(self) -> AsyncWaitClaims:
        # only called where __init__ found the protocol
        return cast(AsyncWaitClaims, self._parts[AsyncWaitClaims])

    # -- decisions ---------------------------------------------------------------------
    def _mem_record(
        self, thread_id: str, key: str, decision: dict[str, Any], audit: dict[str, Any] | None
    ) -> dict[str, Any]:
        with self.mem.lock:
            stored = self.mem.decisions.setdefault((thread_id, key), decision)
            if audit is not None and stored is decision:
                self._mem_append([audit])
            return stored

    def _mem_get(self, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        with self.mem.lock:
            got = {k: self.mem.decisions.get((thread_id, k)) for k in keys}
        return {k: v for k, v in got.items() if v is not None}

    def record_decision(
        self,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """CAS ``decision``; ``audit`` is appended with it (atomically where the saver can)."""
        if not self.decisions:
            return self._mem_record(thread_id, key, decision, audit)
        if self.audit and audit is not None:
            # a saver that keeps the audit log too appends the entry in the same atomic unit
            # (its record_decision takes audit=; the protocol leaves it out for the others)
            return self._decisions.record_decision(  # type: ignore[call-arg]
                thread_id=thread_id, key=key, decision=decision, audit=audit
            )
        stored: dict[str, Any] = self._decisions.record_decision(
            thread_id=thread_id, key=key, decision=decision
        )
        if audit is not None and stored.get("decision_id") == decision["decision_id"]:
            self.append_audit([audit])
        return stored

    async def arecord_decision(
        self,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if self.decisions_sync_only:
            return await asyncio.to_thread(self.record_decision, thread_id, key, decision, audit)
        if not self.adecisions:
            return self._mem_record(thread_id, key, decision, audit)
        if self.aaudit and audit is not None:
            # a saver that keeps the audit log too appends the entry in the same atomic unit
            # (its arecord_decision takes audit=; the protocol leaves it out for the others)
            return await self._adecisions.arecord_decision(  # type: ignore[call-arg]
                thread_id=thread_id, key=key, decision=decision, audit=audit
            )
        stored: dict[str, Any] = await self._adecisions.arecord_decision(
            thread_id=thread_id, key=key, decision=decision
        )
        if audit is not None and stored.get("decision_id") == decision["decision_id"]:
            await self.aappend_audit([audit])
        return stored

    def record_decisions(self, items: Sequence[DecisionItem]) -> list[dict[str, Any]]:
        """CAS several decisions (each with its audit entry); the stored ones, in order.

        On a saver with ``record_decisions`` one round trip (Postgres: one
        transaction; Redis: one pipeline of per-thread scripts); elsewhere one
        :meth:`record_decision` each.
        """
        batch = (
            getattr(self._decisions, "record_decisions", None)
            if self.decisions and self.audit
            else None
        )
        if batch is None:
            return [self.record_decision(*item) for item in items]
        return list(batch(items=[_item_kwargs(item) for item in items]))

    async def arecord_decisions(self, items: Sequence[DecisionItem]) -> list[dict[str, Any]]:
        if self.decisions_sync_only:
            return await asyncio.to_thread(self.record_decisions, items)
        batch = (
            getattr(self._adecisions, "arecord_decisions", None)
            if self.adecisions and self.aaudit
            else None
        )
        if batch is None:
            return [await self.arecord_decision(*item) for item in items]
        return list(await batch(items=[_item_kwargs(item) for item in items]))

    def get_decisions(self, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        if self.decisions:
            return self._decisions.get_decisions(thread_id=thread_id, keys=list(keys))
        return self._mem_get(thread_id, keys)

    async def aget_decisions(
        self, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        if self.decisions_sync_only:
            return await asyncio.to_thread(self.get_decisions, thread_id, keys)
        if self.adecisions:
            return await self._adecisions.aget_decisions(thread_id=thread_id, keys=list(keys))
        return self._mem_get(thread_id, keys)

    def count_decisions(self, thread_id: str, keys: Sequence[str]) -> int:
        if self.decisions:
            return self._decisions.count_decisions(thread_id=thread_id, keys=list(keys))
        return len(self._mem_get(thread_id, keys))

    async def acount_decisions(self, thread_id: str, keys: Sequence[str]) -> int:
        if self.decisions_sync_only:
            return await asyncio.to_thread(self.count_decisions, thread_id, keys)
        if self.adecisions:
            return await self._adecisions.acount_decisions(thread_id=thread_id, keys=list(keys))
        return len(self._mem_get(thread_id, keys))

    # -- the audit trail ------------------------------------------------------------------
    def _mem_append(self, entries: Sequence[dict[str, Any]]) -> None:
        # the caller holds self.mem.lock
        for e in entries:
            if e.get("dedupe_key") is not None:
                key = (str(e["thread_id"]), str(e["dedupe_key"]))
                if key in self.mem.audit_keys:
                    continue
                self.mem.audit_keys.add(key)
            self.mem.audit.append({"seq": next(self.mem.audit_seq), **e})

    def _mem_read(self, thread_id: str) -> list[dict[str, Any]]:
        with self.mem.lock:
            return [dict(e) for e in self.mem.audit if e["thread_id"] == thread_id]

    def _mem_purge(self, thread_id: str) -> int:
        with self.mem.lock:
            kept = [e for e in self.mem.audit if e["thread_id"] != thread_id]
            gone = len(self.mem.audit) - len(kept)
            self.mem.audit = kept
            self.mem.audit_keys = {k for k in self.mem.audit_keys if k[0] != thread_id}
            self.mem.decisions = {k: v for k, v in self.mem.decisions.items() if k[0] != thread_id}
            self.mem.claims = {k: v for k, v in self.mem.claims.items() if k[0] != thread_id}
        return gone

    def append_audit(self, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (the saver's log, or the in-process one)."""
        if self.audit:
            self._audit.append_audit(entries=list(entries))
            return
        with self.mem.lock:
            self._mem_append(entries)

    async def aappend_audit(self, entries: Sequence[dict[str, Any]]) -> None:
        if self.aaudit:
            await self._aaudit.aappend_audit(entries=list(entries))
        elif self.audit:
            await asyncio.to_thread(self.append_audit, entries)
        else:
            self.append_audit(entries)

    def read_audit(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's entries, in order."""
        if self.audit:
            return self._audit.read_audit(thread_id=thread_id)
        return self._mem_read(thread_id)

    async def aread_audit(self, thread_id: str) -> list[dict[str, Any]]:
        if self.aaudit:
            return await self._aaudit.aread_audit(thread_id=thread_id)
        if self.audit:
            return await asyncio.to_thread(self.read_audit, thread_id)
        return self._mem_read(thread_id)

    def purge_audit(self, thread_id: str) -> int:
        """Retention: delete the thread and its entries."""
        if self.audit:
            return int(self._audit.purge_audit(thread_id=thread_id))
        self.saver.delete_thread(thread_id)
        return self._mem_purge(thread_id)

    async def apurge_audit(self, thread_id: str) -> int:
        if self.aaudit:
            return int(await self._aaudit.apurge_audit(thread_id=thread_id))
        if self.audit:
            return await asyncio.to_thread(self.purge_audit, thread_id)
        await self.saver.adelete_thread(thread_id)
        return self._mem_purge(thread_id)

    # -- the wait index --------------------------------------------------------------------
    def _scan(self) -> list[WaitEntry]:
        return entries_from_tuples(self.saver.list(None))

    async def _ascan(self) -> list[WaitEntry]:
        return entries_from_tuples([t async for t in self.saver.alist(None)])

    def list_waits(self, **filters: Any) -> list[WaitEntry]:
        if self.indexed and "kinds" not in filters:
            return self._index.list_waits(**filters)
        return filter_entries(self._scan(), **filters)

    async def alist_waits(self, **filters: Any) -> list[WaitEntry]:
        if self.indexed_sync_only and "kinds" not in filters:
            return await asyncio.to_thread(lambda: self.list_waits(**filters))
        if self.aindexed and "kinds" not in filters:
            return await self._aindex.alist_waits(**filters)
        return filter_entries(await self._ascan(), **filters)

    # -- claims ----------------------------------------------------------------------------
    def _mem_claim(
        self,
        entries: list[WaitEntry],
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None,
    ) -> list[WaitEntry]:
        claimed: list[WaitEntry] = []
        with self.mem.lock:
            for e in filter_entries(entries, kinds=kinds):
                if len(claimed) >= limit:
                    break
                key = (e.thread_id, e.interrupt_id)
                held = self.mem.claims.get(key)
                if held is not None and (held[2] or held[1] > now):
                    continue
                due = e.info.deadline is not None and e.info.deadline <= now
                if not due and not _decision_age_ok(
                    self.mem.decisions.get((e.thread_id, e.interrupt_id)), now, lease
                ):
                    continue
                self.mem.claims[key] = (owner, now + lease, False)
                claimed.append(e)
        return claimed

    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        if self.claims:
            return self._claims.claim_due_waits(
                now=now, owner=owner, lease=lease, limit=limit, kinds=kinds
            )
        return self._mem_claim(self._scan(), now, owner, lease, limit, kinds)

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        if self.claims_sync_only:
            return await asyncio.to_thread(
                lambda: self.claim_due_waits(
                    now=now, owner=owner, lease=lease, limit=limit, kinds=kinds
                )
            )
        if self.aclaims:
            return await self._aclaims.aclaim_due_waits(
                now=now, owner=owner, lease=lease, limit=limit, kinds=kinds
            )
        return self._mem_claim(await self._ascan(), now, owner, lease, limit, kinds)

    def _mem_release(self, thread_id: str, interrupt_id: str, owner: str, done: bool) -> None:
        with self.mem.lock:
            held = self.mem.claims.get((thread_id, interrupt_id))
            if held is None or held[0] != owner:
                return
            if done:
                self.mem.claims[(thread_id, interrupt_id)] = (owner, held[1], True)
            else:
                del self.mem.claims[(thread_id, interrupt_id)]

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        if self.claims:
            self._claims.release_wait_claim(
                thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
            )
        else:
            self._mem_release(thread_id, interrupt_id, owner, done)

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        if self.claims_sync_only:
            await asyncio.to_thread(
                lambda: self.release_wait_claim(
                    thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
                )
            )
            return
        if self.aclaims:
            await self._aclaims.arelease_wait_claim(
                thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
            )
        else:
            self._mem_release(thread_id, interrupt_id, owner, done)

    # -- health ----------------------------------------------------------------------------
    @staticmethod
    def _count(
        entries: list[WaitEntry], now: datetime, kinds: Sequence[str] | None
    ) -> tuple[int, int, datetime | None]:
        entries = filter_entries(entries, kinds=kinds)
        overdue = [e.info.deadline for e in entries if e.info.deadline and e.info.deadline <= now]
        return len(entries), len(overdue), min(overdue) if overdue else None

    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        if self.claims:
            return self._claims.wait_counts(now=now, kinds=kinds)
        return self._count(self._scan(), now, kinds)

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        if self.claims_sync_only:
            return await asyncio.to_thread(lambda: self.wait_counts(now=now, kinds=kinds))
        if self.aclaims:
            return await self._aclaims.await_counts(now=now, kinds=kinds)
        return self._count(await self._ascan(), now, kinds)
