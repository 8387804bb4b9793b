"""The audit trail on PostgreSQL: the append-only table of layout step 0007.

:class:`AuditCore` builds the statements (no I/O); :class:`SyncAudit` and
:class:`AsyncAudit` are the thin shells mixed into the two savers. They
implement :class:`~langgraph_durable.checkpointers.AuditLog` (and the async twin). The table's
trigger refuses UPDATE, TRUNCATE and DELETE; :meth:`AuditCore._op_purge_audit`
is the one path that deletes (the thread and its entries, in one transaction
that names the thread in a transaction-local setting the trigger checks).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._audit import AUDIT_FIELDS, DeferredAuditMixin
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt

_COLUMNS = ", ".join(AUDIT_FIELDS)
_RECORD = """e(at timestamptz, thread_id text, checkpoint_ns text, approval_id text, item text,
  actor text, action text, fingerprint text, outcome text, reason text, dedupe_key text)"""
_VALUES = """e.at, e.thread_id, coalesce(e.checkpoint_ns, ''), e.approval_id, e.item, e.actor,
       e.action, e.fingerprint, e.outcome, e.reason, e.dedupe_key"""

# Entries in array order (the identity numbers them in that order); a node's
# entry seen before (same thread and dedupe key) is skipped.
APPEND_AUDIT = f"""
INSERT INTO {{s}}.durable_audit ({_COLUMNS})
SELECT {_VALUES}
FROM jsonb_to_recordset(%(entries)s) AS {_RECORD}
ON CONFLICT (thread_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"""

# The audit part of a decision's statement: written only if this statement
# stored the decision (the `ins` CTE of RECORD_DECISION returned a row).
AUDIT_CTE = f""", aud AS (
    INSERT INTO {{s}}.durable_audit ({_COLUMNS})
    SELECT {_VALUES}
    FROM jsonb_to_recordset(%(audit)s) AS {_RECORD}
    WHERE EXISTS (SELECT 1 FROM ins)
)"""

READ_AUDIT = f"""
SELECT seq, {_COLUMNS} FROM {{s}}.durable_audit
WHERE thread_id = %(thread_id)s ORDER BY seq"""

PURGE_SETTING = "SELECT set_config('langgraph_durable.audit_purge', %(thread_id)s, true)"
PURGE_AUDIT = """
WITH gone AS (DELETE FROM {s}.durable_audit WHERE thread_id = %(thread_id)s RETURNING 1)
SELECT count(*) FROM gone"""


def audited(record_decision_sql: str) -> str:
    """The decision statement with the audit insert added as one more CTE."""
    head, sep, tail = record_decision_sql.rpartition("\n)\nSELECT decision FROM ins")
    if not sep:
        raise RuntimeError("RECORD_DECISION changed shape: cannot add the audit insert")
    return head + "\n)" + AUDIT_CTE + "\nSELECT decision FROM ins" + tail


class _AuditQueries:
    def __init__(self, schema: str) -> None:
        self.append = render(APPEND_AUDIT, schema)
        self.read = render(READ_AUDIT, schema)
        self.purge = render(PURGE_AUDIT, schema)


def _jsonable(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in entries:
        row = {k: e.get(k) for k in AUDIT_FIELDS}
        row["thread_id"] = check_id("thread_id", row["thread_id"])
        out.append(row)
    return out


def audit_param(entry: dict[str, Any]) -> Jsonb:
    """The ``%(audit)s`` parameter of the audited decision statement."""
    return Jsonb(_jsonable([entry]))


class AuditCore:
    """I/O-free audit operations; mixed into a class that has ``_q`` and ``_op_delete_threads``."""

    _q: Any

    if TYPE_CHECKING:

        def _op_delete_threads(self, thread_ids: Sequence[str]) -> Op: ...

    @cached_property
    def _auq(self) -> _AuditQueries:
        return _AuditQueries(self._q.schema)

    def _op_append_audit(self, entries: Sequence[dict[str, Any]]) -> Op:
        rows = _jsonable(entries)
        if rows:
            yield Stmt(self._auq.append, {"entries": Jsonb(rows)}, prepare=False)

    def _op_read_audit(self, thread_id: str) -> Op:
        rows = yield Stmt(
            self._auq.read, {"thread_id": check_id("thread_id", thread_id)}, fetch=True
        )
        out = []
        for row in rows or ():
            entry = dict(zip(("seq", *AUDIT_FIELDS), row, strict=True))
            entry["at"] = entry["at"].isoformat()
            out.append(entry)
        return out

    def _op_purge_audit(self, thread_id: str) -> Op:
        params = {"thread_id": check_id("thread_id", thread_id)}
        yield Stmt(_sql.BEGIN)
        yield Stmt(PURGE_SETTING, params)
        rows = yield Stmt(self._auq.purge, params, fetch=True)
        yield from self._op_delete_threads([thread_id])
        yield Stmt(_sql.COMMIT)
        return int(rows[0][0]) if rows else 0


class SyncAudit(AuditCore):
    """Sync shell: :class:`~langgraph_durable.checkpointers.AuditLog`."""

    if TYPE_CHECKING:

        def _run(self, operation: str, op: Op) -> Any: ...

        def _op_delete_lease(self, thread_id: str) -> Op: ...

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (one statement; ``dedupe_key`` ones at most once)."""
        self._run("append_audit", self._op_append_audit(entries))

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return self._run("read_audit", self._op_read_audit(thread_id))  # type: ignore[no-any-return]

    def purge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit entries (one transaction)."""
        gone = self._run("purge_audit", self._op_purge_audit(thread_id))
        self._run("delete_lease", self._op_delete_lease(thread_id))
        return int(gone)


class AsyncAudit(DeferredAuditMixin, AuditCore):
    """Async shell (plus sync bridges, as the async saver's other methods have)."""

    if TYPE_CHECKING:

        async def _run(self, operation: str, op: Op) -> Any: ...

        def _bridge(self, coro: Any) -> Any: ...

        def _op_delete_lease(self, thread_id: str) -> Op: ...

    async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Async twin of ``append_audit``."""
        await self._run("append_audit", self._op_append_audit(entries))

    async def aread_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """Async twin of ``read_audit``."""
        return await self._run("read_audit", self._op_read_audit(thread_id))  # type: ignore[no-any-return]

    async def apurge_audit(self, *, thread_id: str) -> int:
        """Async twin of ``purge_audit``."""
        gone = await self._run("purge_audit", self._op_purge_audit(thread_id))
        await self._run("delete_lease", self._op_delete_lease(thread_id))
        return int(gone)

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Sync bridge to :meth:`aappend_audit`."""
        self._bridge(self.aappend_audit(entries=entries))

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """Sync bridge to :meth:`aread_audit`."""
        return self._bridge(self.aread_audit(thread_id=thread_id))  # type: ignore[no-any-return]

    def purge_audit(self, *, thread_id: str) -> int:
        """Sync bridge to :meth:`apurge_audit`."""
        return self._bridge(self.apurge_audit(thread_id=thread_id))  # type: ignore[no-any-return]
