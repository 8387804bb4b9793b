"""The wait index and its claims on the asyncio Postgres saver: ``saver.waits``.

The index rows are written with the interrupts by ``put_writes``; the store
lists them and claims due ones with a lease (``FOR UPDATE SKIP LOCKED``).
The sync store (:mod:`._waits`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from langgraph_durable.checkpointers import _waits as protocols  # async-only
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers._waits import WaitEntry
from langgraph_durable.checkpointers.postgres._approvals import ApprovalsCore
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner


@sync_bridges(protocols.WaitIndex, protocols.WaitClaims)  # async-only
class AsyncPostgresWaits(ApprovalsCore):
    """``AsyncWaitIndex`` and ``AsyncWaitClaims`` (and their sync twins) on PostgreSQL."""

    _runner: AsyncPostgresRunner

    async def alist_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> list[WaitEntry]:
        """Pending marked interrupts, oldest deadline first (``None`` deadlines last)."""
        op = self._core._op_list_waits(kind, approver, thread_id, limit)
        return await self._runner.run("list_waits", op)

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Claim up to ``limit`` due or abandoned waits (``FOR UPDATE SKIP LOCKED``)."""
        return await self._runner.run(
            "claim_due_waits", self._op_claim_due_waits(now, owner, lease, limit, kinds)
        )

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Drop ``owner``'s claim, or mark the wait resolved (``done=True``)."""
        await self._runner.run(
            "release_wait_claim", self._op_release_wait_claim(thread_id, interrupt_id, owner, done)
        )

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """``(waiting, overdue, oldest overdue deadline)``."""
        return await self._runner.run("wait_counts", self._op_wait_counts(now, kinds))
