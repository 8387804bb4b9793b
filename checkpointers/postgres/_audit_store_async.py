"""The audit trail on the asyncio Postgres saver: ``saver.audit``.

Appends, reads and purges go through the schema's functions (see
:mod:`._audit`); :meth:`AsyncPostgresAudit.averify_audit` checks the hash chain.
The sync store (:mod:`._audit_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers import _audit as protocols  # async-only
from langgraph_durable.checkpointers._audit_chain import AuditVerification
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.postgres._audit import AuditCore
from langgraph_durable.checkpointers.postgres._core import PostgresCore
from langgraph_durable.checkpointers.postgres._lease_store_async import AsyncPostgresLeases
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner


@sync_bridges(protocols.AuditLog, protocols.VerifiableAudit)  # async-only
class AsyncPostgresAudit(
    protocols.DeferredAuditMixin,  # async-only
    AuditCore,
):
    """``AsyncAuditLog`` and ``AsyncVerifiableAudit`` (and their sync twins) on PostgreSQL."""

    _runner: AsyncPostgresRunner

    def __init__(
        self, runner: AsyncPostgresRunner, core: PostgresCore, leases: AsyncPostgresLeases
    ) -> None:
        super().__init__(runner, core)
        self._leases = leases  # a purged thread's run lease goes with it

    async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (one statement; ``dedupe_key`` ones at most once)."""
        await self._runner.run("append_audit", self._op_append_audit(entries))

    async def aread_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return await self._runner.run("read_audit", self._op_read_audit(thread_id))

    async def apurge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit entries (one transaction)."""
        gone = await self._runner.run("purge_audit", self._op_purge_audit(thread_id))
        await self._leases.adelete_lease(thread_id=thread_id)
        return int(gone)

    async def averify_audit(self, *, thread_id: str) -> AuditVerification:
        """Check the thread's audit chain; the report names the first broken link."""
        return await self._runner.run("verify_audit", self._op_verify_audit(thread_id))
