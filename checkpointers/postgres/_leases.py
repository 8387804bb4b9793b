"""Run leases in PostgreSQL: table ``durable_run_leases`` (layout step ``run_leases``).

Each operation is one statement, so each compare-and-set is atomic by itself.
:class:`LeaseOps` holds the I/O-free operations (generators of
:class:`~langgraph_durable.checkpointers.postgres._core.Stmt`); :class:`SyncLeases` and
:class:`AsyncLeases` are the thin shells mixed into the two savers, which so
implement :class:`~langgraph_durable.checkpointers._leases.LeaseStore` and its async twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import PARKED, RUNNING, LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers.postgres import _leases_sql as q
from langgraph_durable.checkpointers.postgres._lease_fold import FoldedQueries, fold_op, foldable
from langgraph_durable.checkpointers.postgres._leases_sql import record
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, key_to_store


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


class LeaseOps:
    """I/O-free lease operations; mixed into a class that has ``_q`` (its schema)."""

    _q: Any

    @cached_property
    def _lq(self) -> _LeaseQueries:
        return _LeaseQueries(self._q.schema)

    def _op_acquire_lease(self, thread_id: str, owner: str, now: datetime, ttl: timedelta) -> Op:
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
    ) -> Op:
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
    ) -> Op:
        params = {
            "thread_id": thread_id,
            "owner": owner,
            "now": now,
            "reason": reason,
            "error": error,
        }
        rows = yield Stmt(self._lq.release, params, fetch=True)
        return bool(rows)

    def _op_record_lease_error(self, thread_id: str, owner: str, error: str) -> Op:
        yield Stmt(self._lq.record_error, {"thread_id": thread_id, "owner": owner, "error": error})

    def _op_find_expired_leases(self, now: datetime, limit: int) -> Op:
        rows = yield Stmt(self._lq.find_expired, {"now": now, "limit": int(limit)}, fetch=True)
        return [record(r) for r in rows or ()]

    def _op_claim_expired_lease(
        self, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> Op:
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
    ) -> Op:
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

    def _op_park_lease(self, thread_id: str, token: int, now: datetime, reason: str) -> Op:
        params = {"thread_id": thread_id, "token": int(token), "now": now, "reason": reason}
        rows = yield Stmt(self._lq.park, params, fetch=True)
        return record(rows[0]) if rows else None

    def _op_unpark_lease(self, thread_id: str, retry_at: datetime | None) -> Op:
        rows = yield Stmt(
            self._lq.unpark, {"thread_id": thread_id, "retry_at": retry_at}, fetch=True
        )
        return bool(rows)

    def _op_get_lease(self, thread_id: str) -> Op:
        rows = yield Stmt(self._lq.get, {"thread_id": thread_id}, fetch=True)
        return record(rows[0]) if rows else None

    def _op_list_leases(self, state: str, limit: int) -> Op:
        if state not in (RUNNING, PARKED):
            raise ValueError(f"only running and parked leases are listed, not {state!r}")
        query = self._lq.list_running if state == RUNNING else self._lq.list_parked
        rows = yield Stmt(query, {"limit": int(limit)}, fetch=True)
        return [record(r) for r in rows or ()]

    def _op_lease_counts(self, now: datetime) -> Op:
        rows = yield Stmt(self._lq.counts, {"now": now}, fetch=True)
        running, orphaned, parked = rows[0] if rows else (0, 0, 0)
        return LeaseCounts(int(running), int(orphaned), int(parked))

    def _op_delete_lease(self, thread_id: str) -> Op:
        yield Stmt(self._lq.delete, {"thread_id": thread_id})

    # -- a run's lease statements sent with its first and last write --

    def _lease_put_op(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Op:
        return self._op_put(config, checkpoint, metadata, new_versions)  # type: ignore[attr-defined,no-any-return]

    def _lease_writes_op(self, config: Any, writes: Any, task_id: str, task_path: str) -> Op:
        return self._op_put_writes(config, writes, task_id, task_path)  # type: ignore[attr-defined,no-any-return]

    @cached_property
    def _folded(self) -> FoldedQueries:
        return FoldedQueries(self._q.schema)

    def _with_lease_ops(self, op: Op, pre: Step | None, post: Step | None) -> list[Op]:
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


class SyncLeases(LeaseOps):
    """Sync shell: the ``LeaseStore`` protocol on the saver's connection."""

    if TYPE_CHECKING:

        def _run(self, operation: str, op: Op) -> Any: ...

        def _run_together(self, operation: str, ops: list[Op]) -> list[Any]: ...

    def _run_with_lease(
        self, operation: str, op: Op, pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease statements, in one round trip.

        One lease statement rides inside the write's statement
        (:mod:`._lease_fold`); an acquire and a release together go in a pipeline.
        """
        step = foldable(pre, post)
        if step is not None:
            result, lease = self._run(operation, fold_op(op, step, self._folded))
            return (result, lease, None) if step is pre else (result, None, lease)
        ops = self._with_lease_ops(op, pre, post)
        return _split(self._run_together(operation, ops), pre, post)

    def acquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.acquire_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "acquire_lease",
            self._op_acquire_lease(thread_id, owner, now, ttl),
        )

    def renew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.renew_leases`."""
        return self._run(  # type: ignore[no-any-return]
            "renew_leases",
            self._op_renew_leases(owner, thread_ids, now, ttl, progress),
        )

    def release_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.release_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "release_lease",
            self._op_release_lease(thread_id, owner, now, reason, error),
        )

    def record_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.record_lease_error`."""
        self._run("record_lease_error", self._op_record_lease_error(thread_id, owner, error))

    def find_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.find_expired_leases`."""
        return self._run(  # type: ignore[no-any-return]
            "find_expired_leases",
            self._op_find_expired_leases(now, limit),
        )

    def claim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.claim_expired_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "claim_expired_lease",
            self._op_claim_expired_lease(thread_id, token, owner, now, ttl),
        )

    def take_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.take_over_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "take_over_lease",
            self._op_take_over_lease(thread_id, token, renewed_at, owner, now, ttl),
        )

    def park_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.park_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "park_lease",
            self._op_park_lease(thread_id, token, now, reason),
        )

    def unpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.unpark_lease`."""
        return self._run(  # type: ignore[no-any-return]
            "unpark_lease",
            self._op_unpark_lease(thread_id, retry_at),
        )

    def get_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.get_lease`."""
        return self._run("get_lease", self._op_get_lease(thread_id))  # type: ignore[no-any-return]

    def list_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.list_leases`."""
        return self._run("list_leases", self._op_list_leases(state, limit))  # type: ignore[no-any-return]

    def lease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.lease_counts`."""
        return self._run("lease_counts", self._op_lease_counts(now))  # type: ignore[no-any-return]

    def delete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.delete_lease`."""
        self._run("delete_lease", self._op_delete_lease(thread_id))


class AsyncLeases(LeaseOps):
    """Async shell: the ``AsyncLeaseStore`` protocol on the saver's connection."""

    if TYPE_CHECKING:

        async def _run(self, operation: str, op: Op) -> Any: ...

        async def _run_together(self, operation: str, ops: list[Op]) -> list[Any]: ...

    async def _run_with_lease(
        self, operation: str, op: Op, pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease statements, in one round trip (see the sync twin)."""
        step = foldable(pre, post)
        if step is not None:
            result, lease = await self._run(operation, fold_op(op, step, self._folded))
            return (result, lease, None) if step is pre else (result, None, lease)
        ops = self._with_lease_ops(op, pre, post)
        return _split(await self._run_together(operation, ops), pre, post)

    async def aacquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.acquire_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "acquire_lease",
            self._op_acquire_lease(thread_id, owner, now, ttl),
        )

    async def arenew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.renew_leases`."""
        return await self._run(  # type: ignore[no-any-return]
            "renew_leases",
            self._op_renew_leases(owner, thread_ids, now, ttl, progress),
        )

    async def arelease_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.release_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "release_lease",
            self._op_release_lease(thread_id, owner, now, reason, error),
        )

    async def arecord_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.record_lease_error`."""
        await self._run("record_lease_error", self._op_record_lease_error(thread_id, owner, error))

    async def afind_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.find_expired_leases`."""
        return await self._run(  # type: ignore[no-any-return]
            "find_expired_leases",
            self._op_find_expired_leases(now, limit),
        )

    async def aclaim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.claim_expired_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "claim_expired_lease",
            self._op_claim_expired_lease(thread_id, token, owner, now, ttl),
        )

    async def atake_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.take_over_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "take_over_lease",
            self._op_take_over_lease(thread_id, token, renewed_at, owner, now, ttl),
        )

    async def apark_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.park_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "park_lease",
            self._op_park_lease(thread_id, token, now, reason),
        )

    async def aunpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.unpark_lease`."""
        return await self._run(  # type: ignore[no-any-return]
            "unpark_lease",
            self._op_unpark_lease(thread_id, retry_at),
        )

    async def aget_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.get_lease`."""
        return await self._run("get_lease", self._op_get_lease(thread_id))  # type: ignore[no-any-return]

    async def alist_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.list_leases`."""
        return await self._run(  # type: ignore[no-any-return]
            "list_leases",
            self._op_list_leases(state, limit),
        )

    async def alease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.lease_counts`."""
        return await self._run("lease_counts", self._op_lease_counts(now))  # type: ignore[no-any-return]

    async def adelete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.delete_lease`."""
        await self._run("delete_lease", self._op_delete_lease(thread_id))
