"""Decisions, claims and the audit trail of a foreign saver, kept in this process.

A LangGraph saver without our protocols (``InMemorySaver``) gets its
decisions and claims compare-and-set here, and its audit trail appended to an
in-process list: exactly as durable as that saver, and correct for many threads
of one process. Both backends (sync and async) of one saver share its state:
plain code under a threading lock, which async code may call too (nothing in it
waits on I/O).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.interrupts._wait_entries import filter_entries


def _decision_age_ok(decision: dict[str, Any] | None, now: datetime, lease: timedelta) -> bool:
    if not decision or not decision.get("at"):
        return False
    if decision.get("deferred"):
        return True  # nobody is resuming it: claimable at once
    return datetime.fromisoformat(decision["at"]) + lease <= now


def count(
    entries: list[WaitEntry], now: datetime, kinds: Sequence[str] | None
) -> tuple[int, int, datetime | None]:
    """How many of ``entries`` (of ``kinds``) are pending, overdue, and the oldest deadline."""
    entries = filter_entries(entries, kinds=kinds)
    overdue = [e.info.deadline for e in entries if e.info.deadline and e.info.deadline <= now]
    return len(entries), len(overdue), min(overdue) if overdue else None


class MemoryState:
    """Decisions, claims and the audit trail of one saver, in this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.decisions: dict[tuple[str, str], dict[str, Any]] = {}
        # (thread_id, interrupt_id) -> (owner, until, done)
        self.claims: dict[tuple[str, str], tuple[str, datetime, bool]] = {}
        self.audit: list[dict[str, Any]] = []
        self.audit_keys: set[tuple[str, str]] = set()
        self.audit_seq = itertools.count(1)

    # -- decisions ---------------------------------------------------------------------
    def record(
        self, thread_id: str, key: str, decision: dict[str, Any], audit: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Compare-and-set ``decision`` (and append ``audit`` if it won); the stored one."""
        with self.lock:
            stored = self.decisions.setdefault((thread_id, key), decision)
            if audit is not None and stored is decision:
                self._append([audit])
            return stored

    def get(self, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored decisions of ``keys`` (the keys without one are absent)."""
        with self.lock:
            got = {k: self.decisions.get((thread_id, k)) for k in keys}
        return {k: v for k, v in got.items() if v is not None}

    # -- the audit trail ------------------------------------------------------------------
    def _append(self, entries: Sequence[dict[str, Any]]) -> None:
        # the caller holds self.lock
        for e in entries:
            if e.get("dedupe_key") is not None:
                key = (str(e["thread_id"]), str(e["dedupe_key"]))
                if key in self.audit_keys:
                    continue
                self.audit_keys.add(key)
            self.audit.append({"seq": next(self.audit_seq), **e})

    def append(self, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (an entry whose dedupe key is kept already is skipped)."""
        with self.lock:
            self._append(entries)

    def read(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        with self.lock:
            return [dict(e) for e in self.audit if e["thread_id"] == thread_id]

    def purge(self, thread_id: str) -> int:
        """Forget the thread (entries, decisions, claims); how many entries went."""
        with self.lock:
            kept = [e for e in self.audit if e["thread_id"] != thread_id]
            gone = len(self.audit) - len(kept)
            self.audit = kept
            self.audit_keys = {k for k in self.audit_keys if k[0] != thread_id}
            self.decisions = {k: v for k, v in self.decisions.items() if k[0] != thread_id}
            self.claims = {k: v for k, v in self.claims.items() if k[0] != thread_id}
        return gone

    # -- claims ----------------------------------------------------------------------------
    def claim(
        self,
        entries: list[WaitEntry],
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None,
    ) -> list[WaitEntry]:
        """Claim up to ``limit`` of ``entries`` that are due (a deadline or an old decision)."""
        claimed: list[WaitEntry] = []
        with self.lock:
            for e in filter_entries(entries, kinds=kinds):
                if len(claimed) >= limit:
                    break
                key = (e.thread_id, e.interrupt_id)
                held = self.claims.get(key)
                if held is not None and (held[2] or held[1] > now):
                    continue
                due = e.info.deadline is not None and e.info.deadline <= now
                if not due and not _decision_age_ok(
                    self.decisions.get((e.thread_id, e.interrupt_id)), now, lease
                ):
                    continue
                self.claims[key] = (owner, now + lease, False)
                claimed.append(e)
        return claimed

    def release(self, thread_id: str, interrupt_id: str, owner: str, done: bool) -> None:
        """Release ``owner``'s claim (``done``: kept as resolved, never claimed again)."""
        with self.lock:
            held = self.claims.get((thread_id, interrupt_id))
            if held is None or held[0] != owner:
                return
            if done:
                self.claims[(thread_id, interrupt_id)] = (owner, held[1], True)
            else:
                del self.claims[(thread_id, interrupt_id)]


_MEMORY: weakref.WeakKeyDictionary[Any, MemoryState] = weakref.WeakKeyDictionary()
_MEMORY_LOCK = threading.Lock()


def memory(saver: Any) -> MemoryState:
    """The in-process state of ``saver`` (one per saver object, gone with it)."""
    with _MEMORY_LOCK:
        state = _MEMORY.get(saver)
        if state is None:
            state = _MEMORY[saver] = MemoryState()
        return state
