"""A Redis saver's feature stores: waits, decisions, audit, activity results.

Each store implements the protocols of one feature on the saver's runner and
core: its methods only run an I/O-free operation (:mod:`._wait_ops`,
:mod:`._decision_ops`, :mod:`._audit`, :mod:`._activities`) through
:meth:`~._runner_async.AsyncRedisRunner.run`. The saver holds them as
``waits``, ``decisions``, ``audit`` and ``activities``. An async saver's
stores also have the sync methods of their protocols, for sync code on other
threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers._audit import AuditLog, DeferredAuditMixin, VerifiableAudit
from langgraph_durable.checkpointers._audit_chain import AuditVerification
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers._waits import DecisionStore, WaitClaims, WaitEntry, WaitIndex
from langgraph_durable.checkpointers.redis import _activities as activities
from langgraph_durable.checkpointers.redis import _audit as audit
from langgraph_durable.checkpointers.redis import _decision_ops as decisions
from langgraph_durable.checkpointers.redis import _wait_ops as waits
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner

DeleteThread = Callable[[str], Awaitable[None]]  # async-only
# sync-only: DeleteThread = Callable[[str], None]
"""The saver's own ``delete_thread`` (its run lease goes too, its span is made)."""


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


@sync_bridges(DecisionStore, "record_decisions")  # async-only
class AsyncRedisDecisions:
    """Approval decisions, compare-and-set once per key: ``AsyncDecisionStore``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def arecord_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists for ``(thread_id, key)``; return the stored one.

        ``audit``: an audit entry appended in the same script, only if this
        call stored the decision.
        """
        op = decisions.record_decision(self._core, thread_id, key, decision, audit)
        return await self._runner.run("record_decision", op)

    async def arecord_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`arecord_decision` of each item (its keyword arguments), in one round trip."""
        op = decisions.record_decisions(self._core, items)
        return await self._runner.run("record_decisions", op)

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        op = decisions.get_decisions(self._core, thread_id, keys)
        return await self._runner.run("get_decisions", op)

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision."""
        op = decisions.count_decisions(self._core, thread_id, keys)
        return await self._runner.run("count_decisions", op)


@sync_bridges(AuditLog, VerifiableAudit)  # async-only
class AsyncRedisAudit(
    DeferredAuditMixin,  # async-only
):
    """The audit trail, a chained stream per thread: ``AsyncAuditLog``, ``AsyncVerifiableAudit``.

    Args:
        runner: The saver's runner.
        core: The saver's core.
        delete_thread: The saver's ``adelete_thread``, which :meth:`apurge_audit` calls first.
    """

    def __init__(
        self, runner: AsyncRedisRunner, core: RedisCore, delete_thread: DeleteThread
    ) -> None:
        self._runner = runner
        self._core = core
        self._delete_thread = delete_thread

    async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (``dedupe_key`` ones at most once per thread)."""
        await self._runner.run("append_audit", audit.append_audit(self._core, entries))

    async def aread_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return await self._runner.run("read_audit", audit.read_audit(self._core, thread_id))

    async def apurge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit stream; how many entries went."""
        await self._delete_thread(thread_id)  # the saver's own delete: its lease goes too
        gone = await self._runner.run("purge_audit", audit.purge_audit(self._core, thread_id))
        return int(gone)

    async def averify_audit(self, *, thread_id: str) -> AuditVerification:
        """Check the thread's audit chain; the report names the first broken link."""
        return await self._runner.run("verify_audit", audit.verify_audit(self._core, thread_id))


@sync_bridges("get_activity", "put_activity")  # async-only
class AsyncRedisActivities:
    """Activity results, insert-once per ``(thread_id, key)``: ``ActivityStore``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def aget_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """The recorded result of activity ``key`` on ``thread_id``, or ``None``."""
        op = activities.get_activity(self._core, thread_id, key)
        return await self._runner.run("get_activity", op)

    async def aput_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Record ``value`` unless a result exists; return the stored record."""
        op = activities.put_activity(self._core, thread_id, key, value)
        return await self._runner.run("put_activity", op)
