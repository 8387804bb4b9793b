"""Run leases in PostgreSQL: table ``durable_run_leases`` (layout step ``run_leases``).

Each operation is one statement, so each compare-and-set is atomic by itself.
:class:`LeaseOps` holds the I/O-free operations (generators of
:class:`~langgraph_durable.checkpointers.postgres._core.Stmt`);
:class:`~._lease_store_async.AsyncPostgresLeases`
(``saver.leases``, with its generated sync twin) runs them and so
implement :class:`~langgraph_durable.checkpointers._leases.LeaseStore` and its async twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, TypeVar

from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import PARKED, RUNNING, LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers.postgres import _leases_sql as q
from langgraph_durable.checkpointers.postgres._lease_fold import FoldedQueries
from langgraph_durable.checkpointers.postgres._leases_sql import record
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, key_to_store
from langgraph_durable.checkpointers.postgres._store import PostgresStore

T = TypeVar("T")


class _LeaseQueries:
    def __init__(self, schema: str) -> None:
        def r(template: str) -> str:
            return render(template, schema, cols=q.COLS)

        self.acquire = r(q.ACQUIRE)
        self.renew = r(q.RENEW)
        self.release = r(q.RELEASE)
        self.record_error = r(q.RECORD_ERROR)
        self.find_expired = r(q.FIND_EXPIRED)
        self.claim = r(q.CLAIM)
        self.take_over = r(q.TAKE_OVER)
        self.park = r(q.PARK)
        self.unpark = r(q.UNPARK)
        self.get = r(q.GET)
        self.list_running = r(q.LIST_RUNNING)
        self.list_parked = r(q.LIST_PARKED)
        self.counts = r(q.COUNTS)
        self.delete = r(q.DELETE)


class LeaseOps(PostgresStore):
    """I/O-free lease operations, the base of the lease stores."""

    _q: Any

    @cached_property
    def _lq(self) -> _LeaseQueries:
        return _LeaseQueries(self._q.schema)

    def _op_acquire_lease(
        self, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> Op[LeaseRecord | None]:
        params = {
            "thread_id": key_to_store("thread_id", thread_id),
            "owner": owner,
            "now": now,
            "expires": now + ttl,
        }
        rows = yield Stmt(self._lq.acquire, params, fetch=True)
        return record(rows[0]) if rows else None

    def _op_renew_leases(
        self,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None,
    ) -> Op[list[str]]:
        if not thread_ids:
            return []
        progress = progress or {}
        params = {
            "owner": owner,
            "now": now,
            "expires": now + ttl,
            "ids": list(thread_ids),
            "progress_at": [progress[t][0] if t in progress else None for t in thread_ids],
            "notes": [progress[t][1] if t in progress else None for t in thread_ids],
        }
        rows = yield Stmt(self._lq.renew, params, fetch=True, prepare=False)
        kept = {r[0] for r in rows or ()}
        return [t for t in thread_ids if t not in kept]

    def _op_release_lease(
        self, thread_id: str, owner: str, now: datetime, reason: str, error: str | None
    ) -> Op[bool]:
        params = {
            "thread_id": thread_id,
            "owner": owner,
            "now": now,
            "reason": reason,
            "error": error,
        }
        rows = yield Stmt(self._lq.release, params, fetch=True)
        return bool(rows)

    def _op_record_lease_error(self, thread_id: str, owner: str, error: str) -> Op[Any]:
        yield Stmt(self._lq.record_error, {"thread_id": thread_id, "owner": owner, "error": error})

    def _op_find_expired_leases(self, now: datetime, limit: int) -> Op[list[LeaseRecord]]:
        rows = yield Stmt(self._lq.find_expired, {"now": now, "limit": int(limit)}, fetch=True)
        return [record(r) for r in rows or ()]

    def _op_claim_expired_lease(
        self, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> Op[LeaseRecord | None]:
        params = {
            "thread_id": thread_id,
            "token": int(token),
            "owner": owner,
            "now": now,
            "expires": now + ttl,
        }
        rows = yield Stmt(self._lq.claim, params, fetch=True)
        return record(rows[0]) if rows else None

    def _op_take_over_lease(
        self,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> Op[LeaseRecord | None]:
        params = {
            "thread_id": thread_id,
            "token": int(token),
            "renewed_at": renewed_at,
            "owner": owner,
            "now": now,
            "expires": now + ttl,
        }
        rows = yield Stmt(self._lq.take_over, params, fetch=True)
        return record(rows[0]) if rows else None

    def _op_park_lease(
        self, thread_id: str, token: int, now: datetime, reason: str
    ) -> Op[LeaseRecord | None]:
        params = {"thread_id": thread_id, "token": int(token), "now": now, "reason": reason}
        rows = yield Stmt(self._lq.park, params, fetch=True)
        return record(rows[0]) if rows else None

    def _op_unpark_lease(self, thread_id: str, retry_at: datetime | None) -> Op[bool]:
        rows = yield Stmt(
            self._lq.unpark, {"thread_id": thread_id, "retry_at": retry_at}, fetch=True
        )
        return bool(rows)

    def _op_get_lease(self, thread_id: str) -> Op[LeaseRecord | None]:
        rows = yield Stmt(self._lq.get, {"thread_id": thread_id}, fetch=True)
        return record(rows[0]) if rows else None

    def _op_list_leases(self, state: str, limit: int) -> Op[list[LeaseRecord]]:
        if state not in (RUNNING, PARKED):
            raise ValueError(f"only running and parked leases are listed, not {state!r}")
        query = self._lq.list_running if state == RUNNING else self._lq.list_parked
        rows = yield Stmt(query, {"limit": int(limit)}, fetch=True)
        return [record(r) for r in rows or ()]

    def _op_lease_counts(self, now: datetime) -> Op[LeaseCounts]:
        rows = yield Stmt(self._lq.counts, {"now": now}, fetch=True)
        running, orphaned, parked = rows[0] if rows else (0, 0, 0)
        return LeaseCounts(int(running), int(orphaned), int(parked))

    def _op_delete_lease(self, thread_id: str) -> Op[Any]:
        yield Stmt(self._lq.delete, {"thread_id": thread_id})

    # -- a run's lease statements sent with its first and last write --

    @cached_property
    def _folded(self) -> FoldedQueries:
        return FoldedQueries(self._q.schema)

    def _with_lease_ops(self, op: Op[Any], pre: Step | None, post: Step | None) -> list[Op[Any]]:
        ops = [op]
        if pre is not None:
            ops.insert(0, getattr(self, "_op_" + pre[0])(**pre[1]))
        if post is not None:
            ops.append(getattr(self, "_op_" + post[0])(**post[1]))
        return ops


def _split(results: list[Any], pre: Step | None, post: Step | None) -> tuple[Any, Any, Any]:
    """``(write result, pre result, post result)`` of :meth:`LeaseOps._with_lease_ops`."""
    first = 1 if pre is not None else 0
    return (
        results[first],
        results[0] if pre is not None else None,
        results[-1] if post is not None else None,
    )
