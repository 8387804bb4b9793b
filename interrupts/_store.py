# Generated from interrupts/_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Where decisions and claims live: the saver's own fast path, or in process.

Our savers implement :class:`~langgraph_durable.checkpointers.WaitIndex`,
the ``WaitClaims`` and ``DecisionStore`` protocols in storage. Any
other LangGraph saver gets the fallback of
:mod:`~langgraph_durable.interrupts._store_memory`: pending waits are found by
scanning ``saver.list(None)`` and decisions and claims are compare-and-set in
process memory, which is exactly as durable as an in-memory saver and correct
for many threads of one process. The audit trail
(:class:`~langgraph_durable.checkpointers.AuditLog`) falls back the same
way: an in-process list per saver, gone with the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.checkpointers import (
    AuditLog,
    DecisionStore,
    WaitClaims,
    WaitEntry,
    WaitIndex,
    feature,
)
from langgraph_durable.interrupts._store_memory import count, memory
from langgraph_durable.interrupts._wait_entries import entries_from_tuples, filter_entries

# (thread_id, key, decision, audit entry or None): one compare-and-set of a batch
DecisionItem = tuple[str, str, dict[str, Any], "dict[str, Any] | None"]


def _item_kwargs(item: DecisionItem) -> dict[str, Any]:
    thread_id, key, decision, audit = item
    return {"thread_id": thread_id, "key": key, "decision": decision, "audit": audit}


class Backend:
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
        self._index: WaitIndex | None = feature(saver, WaitIndex)
        self._claims: WaitClaims | None = feature(saver, WaitClaims)
        self._decisions: DecisionStore | None = feature(saver, DecisionStore)
        self._audit: AuditLog | None = feature(saver, AuditLog)
        self.indexed = self._index is not None
        self.claims = self._claims is not None
        self.decisions = self._decisions is not None
        self.audit = self._audit is not None
        self.atomic_audit = self.decisions and self.audit

    # -- decisions ---------------------------------------------------------------------
    def record_decision(
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

    def record_decisions(self, items: Sequence[DecisionItem]) -> list[dict[str, Any]]:
        """CAS several decisions (each with its audit entry); the stored ones, in order.

        On a saver with ``record_decisions`` one round trip (Postgres: one
        transaction; Redis: one pipeline of per-thread scripts); elsewhere one
        :meth:`record_decision` each.
        """
        batch = getattr(self._decisions, "record_decisions", None) if self.atomic_audit else None
        if batch is None:
            return [self.record_decision(*item) for item in items]
        return list(batch(items=[_item_kwargs(item) for item in items]))

    def get_decisions(self, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        if self._decisions is not None:
            return self._decisions.get_decisions(thread_id=thread_id, keys=list(keys))
        return self.mem.get(thread_id, keys)

    def count_decisions(self, thread_id: str, keys: Sequence[str]) -> int:
        if self._decisions is not None:
            return self._decisions.count_decisions(thread_id=thread_id, keys=list(keys))
        return len(self.mem.get(thread_id, keys))

    # -- the audit trail ------------------------------------------------------------------
    def append_audit(self, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (the saver's log, or the in-process one)."""
        if self._audit is not None:
            self._audit.append_audit(entries=list(entries))
        else:
            self.mem.append(entries)

    def read_audit(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's entries, in order."""
        if self._audit is not None:
            return self._audit.read_audit(thread_id=thread_id)
        return self.mem.read(thread_id)

    def purge_audit(self, thread_id: str) -> int:
        """Retention: delete the thread and its entries."""
        if self._audit is not None:
            return int(self._audit.purge_audit(thread_id=thread_id))
        self.saver.delete_thread(thread_id)
        return self.mem.purge(thread_id)

    # -- the wait index --------------------------------------------------------------------
    def _scan(self) -> list[WaitEntry]:
        return entries_from_tuples([t for t in self.saver.list(None)])

    def list_waits(self, **filters: Any) -> list[WaitEntry]:
        if self._index is not None and "kinds" not in filters:
            return self._index.list_waits(**filters)
        return filter_entries(self._scan(), **filters)

    # -- claims ----------------------------------------------------------------------------
    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        if self._claims is not None:
            return self._claims.claim_due_waits(
                now=now, owner=owner, lease=lease, limit=limit, kinds=kinds
            )
        return self.mem.claim(self._scan(), now, owner, lease, limit, kinds)

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        if self._claims is not None:
            self._claims.release_wait_claim(
                thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
            )
        else:
            self.mem.release(thread_id, interrupt_id, owner, done)

    # -- health ----------------------------------------------------------------------------
    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        if self._claims is not None:
            return self._claims.wait_counts(now=now, kinds=kinds)
        return count(self._scan(), now, kinds)
