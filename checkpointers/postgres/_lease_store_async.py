"""Run leases on the asyncio Postgres saver: ``saver.leases``.

The sync store (:mod:`._lease_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers.postgres._lease_fold import fold_op, foldable
from langgraph_durable.checkpointers.postgres._leases import LeaseOps, _split
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner
from langgraph_durable.checkpointers.postgres._stmt import Op


class AsyncPostgresLeases(LeaseOps):
    """``AsyncLeaseStore`` on PostgreSQL (table ``durable_run_leases``)."""

    _runner: AsyncPostgresRunner

    async def arun_with_lease(
        self, operation: str, op: Op[Any], pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease statements, in one round trip.

        One lease statement rides inside the write's statement
        (:mod:`._lease_fold`); an acquire and a release together go in a pipeline.
        """
        step = foldable(pre, post)
        if step is not None:
            result, lease = await self._runner.run(operation, fold_op(op, step, self._folded))
            return (result, lease, None) if step is pre else (result, None, lease)
        ops = self._with_lease_ops(op, pre, post)
        return _split(await self._runner.run_together(operation, ops), pre, post)

    async def aacquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.acquire_lease`."""
        return await self._runner.run(
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
        return await self._runner.run(
            "renew_leases",
            self._op_renew_leases(owner, thread_ids, now, ttl, progress),
        )

    async def arelease_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.release_lease`."""
        return await self._runner.run(
            "release_lease",
            self._op_release_lease(thread_id, owner, now, reason, error),
        )

    async def arecord_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.record_lease_error`."""
        await self._runner.run(
            "record_lease_error", self._op_record_lease_error(thread_id, owner, error)
        )

    async def afind_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.find_expired_leases`."""
        return await self._runner.run(
            "find_expired_leases",
            self._op_find_expired_leases(now, limit),
        )

    async def aclaim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.claim_expired_lease`."""
        return await self._runner.run(
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
        return await self._runner.run(
            "take_over_lease",
            self._op_take_over_lease(thread_id, token, renewed_at, owner, now, ttl),
        )

    async def apark_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.park_lease`."""
        return await self._runner.run(
            "park_lease",
            self._op_park_lease(thread_id, token, now, reason),
        )

    async def aunpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.unpark_lease`."""
        return await self._runner.run(
            "unpark_lease",
            self._op_unpark_lease(thread_id, retry_at),
        )

    async def aget_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.get_lease`."""
        return await self._runner.run("get_lease", self._op_get_lease(thread_id))

    async def alist_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.list_leases`."""
        return await self._runner.run(
            "list_leases",
            self._op_list_leases(state, limit),
        )

    async def alease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.lease_counts`."""
        return await self._runner.run("lease_counts", self._op_lease_counts(now))

    async def adelete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers._leases.LeaseStore.delete_lease`."""
        await self._runner.run("delete_lease", self._op_delete_lease(thread_id))
