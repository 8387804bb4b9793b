# Generated from checkpointers/postgres/_audit_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The audit trail on the asyncio Postgres saver: ``saver.audit``.

Appends, reads and purges go through the schema's functions (see
:mod:`._audit`); :meth:`PostgresAudit.verify_audit` checks the hash chain.
The sync store (:mod:`._audit_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers._audit_chain import AuditVerification
from langgraph_durable.checkpointers.postgres._audit import AuditCore
from langgraph_durable.checkpointers.postgres._core import PostgresCore
from langgraph_durable.checkpointers.postgres._lease_store import PostgresLeases
from langgraph_durable.checkpointers.postgres._runner import PostgresRunner


class PostgresAudit(
    AuditCore,
):
    """``AuditLog`` and ``VerifiableAudit`` (and their sync twins) on PostgreSQL."""

    _runner: PostgresRunner

    def __init__(self, runner: PostgresRunner, core: PostgresCore, leases: PostgresLeases) -> None:
        super().__init__(runner, core)
        self._leases = leases  # a purged thread's run lease goes with it

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (one statement; ``dedupe_key`` ones at most once)."""
        self._runner.run("append_audit", self._op_append_audit(entries))

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return self._runner.run("read_audit", self._op_read_audit(thread_id))

    def purge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit entries (one transaction)."""
        gone = self._runner.run("purge_audit", self._op_purge_audit(thread_id))
        self._leases.delete_lease(thread_id=thread_id)
        return int(gone)

    def verify_audit(self, *, thread_id: str) -> AuditVerification:
        """Check the thread's audit chain; the report names the first broken link."""
        return self._runner.run("verify_audit", self._op_verify_audit(thread_id))
