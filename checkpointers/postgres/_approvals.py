"""The approvals fast path on PostgreSQL: decisions (CAS) and claims with leases.

:class:`ApprovalsCore` holds the I/O-free operations (generators of
:class:`~langgraph_durable.checkpointers.postgres._core.Stmt`); :class:`SyncApprovals` and
:class:`AsyncApprovals` are the thin shells mixed into the two savers. They
implement :class:`~langgraph_durable.checkpointers.WaitClaims` and
:class:`~langgraph_durable.checkpointers.DecisionStore` (and the async twins) over the tables of
layout step 0003.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.serde.types import INTERRUPT
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import WaitEntry, WaitInfo, decision_claim_time
from langgraph_durable.checkpointers.postgres import _approvals_sql as q
from langgraph_durable.checkpointers.postgres._audit import audit_param, audited
from langgraph_durable.checkpointers.postgres._core import Op, Stmt
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import key_to_store


class _ApprovalQueries:
    def __init__(self, schema: str) -> None:
        self.record = render(q.RECORD_DECISION, schema)
        self.record_audited = render(audited(q.RECORD_DECISION), schema)
        self.get_one = render(q.GET_DECISION, schema)
        self.get_many = render(q.GET_DECISIONS, schema)
        self.count = render(q.COUNT_DECISIONS, schema)
        self.claim = render(q.CLAIM_DUE, schema)
        self.release = render(q.RELEASE_CLAIM, schema)
        self.finish = render(q.FINISH_CLAIM, schema)
        self.counts = render(q.WAIT_COUNTS, schema)


def _in_order(order: list[int], results: list[Any]) -> list[dict[str, Any]]:
    out: list[Any] = [None] * len(order)
    for result, i in zip(results, order, strict=True):
        out[i] = result
    return out


def _kinds(kinds: Sequence[str] | None) -> list[str] | None:
    return None if kinds is None else [str(k) for k in kinds]


class ApprovalsCore:
    """I/O-free approval operations; mixed into a class that has ``_q`` and ``_decode_value``."""

    _q: Any

    if TYPE_CHECKING:  # provided by PostgresCore and the savers, later in the MRO

        def _decode_value(
            self, type_: str, blob: bytes | None, *, where: Any, channel: str
        ) -> Any: ...

    @cached_property
    def _aq(self) -> _ApprovalQueries:
        return _ApprovalQueries(self._q.schema)

    def _op_record_decision(
        self,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> Op:
        params: dict[str, Any] = {
            "thread_id": key_to_store("thread_id", thread_id),
            "key": key_to_store("key", key),
            "decision": Jsonb(decision),
            "at": datetime.fromisoformat(decision["at"]),
            "owner": f"decision:{decision.get('by', '')}",
            "claim_at": decision_claim_time(decision),
        }
        query = self._aq.record
        if audit is not None:
            # the entry goes in with the decision, only if this call stored it
            params["audit"] = audit_param(audit)
            query = self._aq.record_audited
        rows = yield Stmt(query, params, fetch=True)
        if not rows:
            # the winner committed after this statement's snapshot: read it now
            rows = yield Stmt(self._aq.get_one, {"thread_id": thread_id, "key": key}, fetch=True)
        return rows[0][0] if rows else decision

    def _ops_record_decisions(self, items: Sequence[dict[str, Any]]) -> tuple[list[int], list[Op]]:
        """One :meth:`_op_record_decision` per item, in (thread, key) order.

        Run together they are one pipeline and one transaction; the fixed
        order keeps two batches that share rows from waiting on each other.
        """
        order = sorted(range(len(items)), key=lambda i: (items[i]["thread_id"], items[i]["key"]))
        return order, [self._op_record_decision(**items[i]) for i in order]

    def _op_get_decisions(self, thread_id: str, keys: Sequence[str]) -> Op:
        rows = yield Stmt(
            self._aq.get_many,
            {"thread_id": check_id("thread_id", thread_id), "keys": list(keys)},
            fetch=True,
            prepare=False,
        )
        return {k: d for k, d in rows or ()}

    def _op_count_decisions(self, thread_id: str, keys: Sequence[str]) -> Op:
        rows = yield Stmt(
            self._aq.count,
            {"thread_id": check_id("thread_id", thread_id), "keys": list(keys)},
            fetch=True,
            prepare=False,
        )
        return int(rows[0][0]) if rows else 0

    def _op_claim_due_waits(
        self,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None,
    ) -> Op:
        params = {
            "now": now,
            "expired": now - lease,
            "owner": owner,
            "limit": int(limit),
            "kinds": _kinds(kinds),
        }
        rows = yield Stmt(self._aq.claim, params, fetch=True)
        entries = []
        for tid, ns, cid, iid, kind, deadline, approvers, level, v_type, v_blob, created in (
            rows or ()
        ):
            value = self._decode_value(v_type, v_blob, where=(tid, ns, cid), channel=INTERRUPT)
            entries.append(
                WaitEntry(
                    thread_id=tid,
                    checkpoint_ns=ns,
                    checkpoint_id=cid,
                    interrupt_id=iid,
                    info=WaitInfo(kind, deadline, tuple(approvers or ()), level),
                    value=value,
                    created_at=created,
                    claimed_by=owner,
                )
            )
        return entries

    def _op_release_wait_claim(
        self, thread_id: str, interrupt_id: str, owner: str, done: bool
    ) -> Op:
        params = {"thread_id": thread_id, "interrupt_id": interrupt_id, "owner": owner}
        yield Stmt(self._aq.finish if done else self._aq.release, params)

    def _op_wait_counts(self, now: datetime, kinds: Sequence[str] | None) -> Op:
        rows = yield Stmt(self._aq.counts, {"now": now, "kinds": _kinds(kinds)}, fetch=True)
        waiting, overdue, oldest = rows[0] if rows else (0, 0, None)
        return int(waiting), int(overdue or 0), oldest


class SyncApprovals(ApprovalsCore):
    """Sync shell: the ``WaitClaims`` and ``DecisionStore`` protocols."""

    if TYPE_CHECKING:

        def _run(self, operation: str, op: Op) -> Any: ...

        def _run_together(self, operation: str, ops: list[Op]) -> list[Any]: ...

    def record_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists for ``(thread_id, key)``; return the stored one.

        ``audit``: an audit entry appended in the same statement, only if this
        call stored the decision.
        """
        return self._run(  # type: ignore[no-any-return]
            "record_decision", self._op_record_decision(thread_id, key, decision, audit)
        )

    def record_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`record_decision` of each item (its keyword arguments), in one round trip.

        One pipeline, committed as one transaction; each item is its own
        compare-and-set with its own audit entry. Returns the stored decisions
        in the order of ``items``.
        """
        if not items:
            return []
        order, ops = self._ops_record_decisions(items)
        return _in_order(order, self._run_together("record_decisions", ops))

    def get_decisions(self, *, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        return self._run("get_decisions", self._op_get_decisions(thread_id, keys))  # type: ignore[no-any-return]

    def count_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision."""
        return self._run(  # type: ignore[no-any-return]
            "count_decisions", self._op_count_decisions(thread_id, keys)
        )

    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Claim up to ``limit`` due or abandoned waits (``FOR UPDATE SKIP LOCKED``)."""
        return self._run(  # type: ignore[no-any-return]
            "claim_due_waits", self._op_claim_due_waits(now, owner, lease, limit, kinds)
        )

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Drop ``owner``'s claim, or mark the wait resolved (``done=True``)."""
        self._run(
            "release_wait_claim", self._op_release_wait_claim(thread_id, interrupt_id, owner, done)
        )

    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """``(waiting, overdue, oldest overdue deadline)``."""
        return self._run("wait_counts", self._op_wait_counts(now, kinds))  # type: ignore[no-any-return]


class AsyncApprovals(ApprovalsCore):
    """Async shell (plus sync bridges, as the async saver's other methods have)."""

    if TYPE_CHECKING:

        async def _run(self, operation: str, op: Op) -> Any: ...

        async def _run_together(self, operation: str, ops: list[Op]) -> list[Any]: ...

        def _bridge(self, coro: Any) -> Any: ...

    async def arecord_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Async twin of ``record_decision``."""
        return await self._run(  # type: ignore[no-any-return]
            "record_decision", self._op_record_decision(thread_id, key, decision, audit)
        )

    async def arecord_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Async twin of ``record_decisions``."""
        if not items:
            return []
        order, ops = self._ops_record_decisions(items)
        return _in_order(order, await self._run_together("record_decisions", ops))

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Async twin of ``get_decisions``."""
        return await self._run("get_decisions", self._op_get_decisions(thread_id, keys))  # type: ignore[no-any-return]

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """Async twin of ``count_decisions``."""
        return await self._run(  # type: ignore[no-any-return]
            "count_decisions", self._op_count_decisions(thread_id, keys)
        )

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Async twin of ``claim_due_waits``."""
        return await self._run(  # type: ignore[no-any-return]
            "claim_due_waits", self._op_claim_due_waits(now, owner, lease, limit, kinds)
        )

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Async twin of ``release_wait_claim``."""
        await self._run(
            "release_wait_claim", self._op_release_wait_claim(thread_id, interrupt_id, owner, done)
        )

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """Async twin of ``wait_counts``."""
        return await self._run("wait_counts", self._op_wait_counts(now, kinds))  # type: ignore[no-any-return]

    def record_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Sync bridge to :meth:`arecord_decision`."""
        return self._bridge(  # type: ignore[no-any-return]
            self.arecord_decision(thread_id=thread_id, key=key, decision=decision, audit=audit)
        )

    def record_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Sync bridge to :meth:`arecord_decisions`."""
        return self._bridge(self.arecord_decisions(items=items))  # type: ignore[no-any-return]

    def get_decisions(self, *, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Sync bridge to :meth:`aget_decisions`."""
        return self._bridge(self.aget_decisions(thread_id=thread_id, keys=keys))  # type: ignore[no-any-return]

    def count_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """Sync bridge to :meth:`acount_decisions`."""
        return self._bridge(self.acount_decisions(thread_id=thread_id, keys=keys))  # type: ignore[no-any-return]

    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Sync bridge to :meth:`aclaim_due_waits`."""
        return self._bridge(  # type: ignore[no-any-return]
            self.aclaim_due_waits(now=now, owner=owner, lease=lease, limit=limit, kinds=kinds)
        )

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Sync bridge to :meth:`arelease_wait_claim`."""
        self._bridge(
            self.arelease_wait_claim(
                thread_id=thread_id, interrupt_id=interrupt_id, owner=owner, done=done
            )
        )

    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """Sync bridge to :meth:`await_counts`."""
        return self._bridge(self.await_counts(now=now, kinds=kinds))  # type: ignore[no-any-return]
