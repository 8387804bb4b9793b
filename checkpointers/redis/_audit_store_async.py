"""The audit trail on Redis: ``saver.audit``.

Its methods run the I/O-free operations of :mod:`._audit` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods of its
protocols, for sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph_durable.checkpointers._audit import AuditLog, DeferredAuditMixin, VerifiableAudit
from langgraph_durable.checkpointers._audit_chain import AuditVerification
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.redis import _audit as audit
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner

DeleteThread = Callable[[str], Awaitable[None]]  # async-only
# sync-only: DeleteThread = Callable[[str], None]
"""The saver's own ``delete_thread`` (its run lease goes too, its span is made)."""


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
