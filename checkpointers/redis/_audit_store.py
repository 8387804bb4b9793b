# Generated from checkpointers/redis/_audit_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The audit trail on Redis: ``saver.audit``.

Its methods run the I/O-free operations of :mod:`._audit` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods of its
protocols, for sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph_durable.checkpointers._audit_chain import AuditVerification
from langgraph_durable.checkpointers.redis import _audit as audit
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner import RedisRunner

DeleteThread = Callable[[str], None]
"""The saver's own ``delete_thread`` (its run lease goes too, its span is made)."""


class RedisAudit:
    """The audit trail, a chained stream per thread: ``AuditLog``, ``VerifiableAudit``.

    Args:
        runner: The saver's runner.
        core: The saver's core.
        delete_thread: The saver's ``delete_thread``, which :meth:`purge_audit` calls first.
    """

    def __init__(self, runner: RedisRunner, core: RedisCore, delete_thread: DeleteThread) -> None:
        self._runner = runner
        self._core = core
        self._delete_thread = delete_thread

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (``dedupe_key`` ones at most once per thread)."""
        self._runner.run("append_audit", audit.append_audit(self._core, entries))

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return self._runner.run("read_audit", audit.read_audit(self._core, thread_id))

    def purge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit stream; how many entries went."""
        self._delete_thread(thread_id)  # the saver's own delete: its lease goes too
        gone = self._runner.run("purge_audit", audit.purge_audit(self._core, thread_id))
        return int(gone)

    def verify_audit(self, *, thread_id: str) -> AuditVerification:
        """Check the thread's audit chain; the report names the first broken link."""
        return self._runner.run("verify_audit", audit.verify_audit(self._core, thread_id))
