"""The wait index and the sweepers' claims on Redis: ``saver.waits``.

Its methods run the I/O-free operations of :mod:`._wait_ops` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods of its
protocols, for sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers._waits import WaitClaims, WaitEntry, WaitIndex
from langgraph_durable.checkpointers.redis import _wait_ops as waits
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner


@sync_bridges(WaitIndex, WaitClaims)  # async-only
class AsyncRedisWaits:
    """The wait index and the sweepers' claims: ``AsyncWaitIndex`` and ``AsyncWaitClaims``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def alist_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> list[WaitEntry]:
        """Pending marked interrupts, oldest deadline first (``None`` deadlines last)."""
        op = waits.list_waits(
            self._core, kind=kind, approver=approver, thread_id=thread_id, limit=limit
        )
        return await self._runner.run("list_waits", op)

    async def areconcile_waits(self) -> int:
        """Re-add to the due-wait shards every indexed wait they miss; returns how many.

        A shard entry is written right after the atomic thread write; a crash
        in between leaves the wait indexed in its thread but not in its shard.
        Run this after an unclean stop (the sweeper may call it periodically).
        """
        return await self._runner.run("reconcile_waits", waits.reconcile_waits(self._core))

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Claim up to ``limit`` due or abandoned waits."""
        op = waits.claim_due_waits(self._core, now, owner, lease, limit, kinds)
        return await self._runner.run("claim_due_waits", op)

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Drop ``owner``'s claim, or mark the wait resolved (``done=True``)."""
        op = waits.release_wait_claim(self._core, thread_id, interrupt_id, owner, done)
        await self._runner.run("release_wait_claim", op)

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """``(waiting, overdue, oldest overdue deadline)``."""
        return await self._runner.run("wait_counts", waits.wait_counts(self._core, now, kinds))
