"""The approvals fast path on PostgreSQL: decisions (CAS) and claims with leases.

:class:`ApprovalsCore` holds the I/O-free operations (generators of
:class:`~langgraph_durable.checkpointers.postgres._core.Stmt`);
:class:`~._decisions_async.AsyncPostgresDecisions`
(``saver.decisions``) and :class:`~._waits_async.AsyncPostgresWaits` (``saver.waits``),
with their generated sync twins, run them. They
implement :class:`~langgraph_durable.checkpointers.WaitClaims` and
:class:`~langgraph_durable.checkpointers.DecisionStore` (and the async twins) over the tables of
layout step 0003.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, TypeVar

from langgraph.checkpoint.serde.types import INTERRUPT
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import WaitEntry, WaitInfo, decision_claim_time
from langgraph_durable.checkpointers.postgres import _approvals_sql as q
from langgraph_durable.checkpointers.postgres._audit import audit_param, audited
from langgraph_durable.checkpointers.postgres._core import Op, Stmt
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import key_to_store
from langgraph_durable.checkpointers.postgres._store import PostgresStore

T = TypeVar("T")


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


class ApprovalsCore(PostgresStore):
    """I/O-free approval operations, the base of the decision and wait stores."""

    _q: Any

    @cached_property
    def _aq(self) -> _ApprovalQueries:
        return _ApprovalQueries(self._q.schema)

    def _op_record_decision(
        self,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> Op[dict[str, Any]]:
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

    def _ops_record_decisions(
        self, items: Sequence[dict[str, Any]]
    ) -> tuple[list[int], list[Op[Any]]]:
        """One :meth:`_op_record_decision` per item, in (thread, key) order.

        Run together they are one pipeline and one transaction; the fixed
        order keeps two batches that share rows from waiting on each other.
        """
        order = sorted(range(len(items)), key=lambda i: (items[i]["thread_id"], items[i]["key"]))
        return order, [self._op_record_decision(**items[i]) for i in order]

    def _op_get_decisions(
        self, thread_id: str, keys: Sequence[str]
    ) -> Op[dict[str, dict[str, Any]]]:
        rows = yield Stmt(
            self._aq.get_many,
            {"thread_id": check_id("thread_id", thread_id), "keys": list(keys)},
            fetch=True,
            prepare=False,
        )
        return {k: d for k, d in rows or ()}

    def _op_count_decisions(self, thread_id: str, keys: Sequence[str]) -> Op[int]:
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
    ) -> Op[list[WaitEntry]]:
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
    ) -> Op[Any]:
        params = {"thread_id": thread_id, "interrupt_id": interrupt_id, "owner": owner}
        yield Stmt(self._aq.finish if done else self._aq.release, params)

    def _op_wait_counts(
        self, now: datetime, kinds: Sequence[str] | None
    ) -> Op[tuple[int, int, datetime | None]]:
        rows = yield Stmt(self._aq.counts, {"now": now, "kinds": _kinds(kinds)}, fetch=True)
        waiting, overdue, oldest = rows[0] if rows else (0, 0, None)
        return int(waiting), int(overdue or 0), oldest
