"""The audit trail on PostgreSQL: the table of layout step 0007, chained by step 0010.

:class:`AuditCore` builds the statements (no I/O); :class:`~._audit_store_async.AsyncPostgresAudit`
(``saver.audit``, with its generated sync twin) runs them. They
implement :class:`~langgraph_durable.checkpointers.AuditLog` (and the async
twin) and verify the hash chain
(:class:`~langgraph_durable.checkpointers.VerifiableAudit`).

Rows are written only by two functions of the schema, which run as its owner:
``durable_audit_append`` (every append, the decision's own too: it links each
entry to the one before while it holds the thread's head row locked) and
``durable_audit_purge`` (the retention call's delete). The tables' triggers
refuse every other write, whatever the writer's grants (see the step's SQL).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import Any, TypeVar

from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._audit import AUDIT_FIELDS
from langgraph_durable.checkpointers._audit_chain import (
    AuditVerification,
    ChainedEntry,
    ChainHead,
    check_chain,
)
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, key_to_store
from langgraph_durable.checkpointers.postgres._store import PostgresStore

T = TypeVar("T")

_COLUMNS = ", ".join(AUDIT_FIELDS)

# Entries in array order (the identity numbers them in that order); a node's
# entry seen before (same thread and dedupe key) is skipped.
APPEND_AUDIT = "SELECT {s}.durable_audit_append(%(entries)s)"

# The audit part of a decision's statement: appended only if this statement
# stored the decision (the `ins` CTE of RECORD_DECISION returned a row). A
# CTE that only selects runs when it is read: the decision's row reads it.
AUDIT_CTE = """, aud AS (
    SELECT {s}.durable_audit_append(%(audit)s) AS n FROM ins
)"""
AUDIT_READ = "\nSELECT decision FROM ins CROSS JOIN (SELECT count(*) FROM aud) AS a"

READ_AUDIT = f"""
SELECT seq, {_COLUMNS} FROM {{s}}.durable_audit
WHERE thread_id = %(thread_id)s ORDER BY seq"""

# The head and every entry of the thread in one statement: one snapshot.
VERIFY_AUDIT = f"""
SELECT h.pos, h.link, h.base_pos, h.base_link, h.purged, h.purged_at,
       a.seq, a.pos, a.link, a.recorded_at, {", ".join("a." + c for c in AUDIT_FIELDS)}
FROM (SELECT 1) AS one
LEFT JOIN {{s}}.durable_audit_heads AS h ON h.thread_id = %(thread_id)s
LEFT JOIN {{s}}.durable_audit AS a ON a.thread_id = %(thread_id)s
ORDER BY a.seq"""

PURGE_AUDIT = "SELECT {s}.durable_audit_purge(%(thread_id)s)"

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)


def row_digest(values: Sequence[Any]) -> bytes:
    """SHA-256 of an entry's canonical bytes, as ``durable_audit_digest`` builds them.

    Args:
        values: ``at``, ``recorded_at`` (aware datetimes), then the text columns
            ``thread_id`` .. ``dedupe_key`` in :data:`AUDIT_FIELDS` order.
    """
    parts = []
    for v in values:
        if v is None:
            parts.append("-")
            continue
        text = str((v - _EPOCH) // _MICRO) if isinstance(v, datetime) else str(v)
        parts.append(f"{len(text.encode('utf-8'))}:{text}")
    return hashlib.sha256("".join(parts).encode("utf-8")).digest()


def _chain(thread_id: str, rows: Sequence[tuple[Any, ...]]) -> AuditVerification:
    first = rows[0] if rows else None
    head = None
    if first is not None and first[0] is not None:
        pos, link, base_pos, base_link, purged, purged_at = first[:6]
        head = ChainHead(
            position=int(pos),
            link=bytes(link),
            base_position=int(base_pos),
            base_link=bytes(base_link),
            purged=int(purged),
            purged_at=purged_at,
        )
    entries = []
    for row in rows:
        seq, pos, link, recorded_at, at, *texts = row[6:]
        if seq is None:
            continue  # the thread has no entries: the one row is the head's
        entries.append(
            ChainedEntry(
                seq=int(seq),
                position=None if pos is None else int(pos),
                link=None if link is None else bytes(link),
                digest=row_digest([at, recorded_at, *texts]),
            )
        )
    return check_chain(thread_id, head, entries)


def audited(record_decision_sql: str) -> str:
    """The decision statement with the audit append added as one more CTE."""
    head, sep, tail = record_decision_sql.rpartition("\n)\nSELECT decision FROM ins")
    if not sep:
        raise RuntimeError("RECORD_DECISION changed shape: cannot add the audit append")
    return head + "\n)" + AUDIT_CTE + AUDIT_READ + tail


class _AuditQueries:
    def __init__(self, schema: str) -> None:
        self.append = render(APPEND_AUDIT, schema)
        self.read = render(READ_AUDIT, schema)
        self.purge = render(PURGE_AUDIT, schema)
        self.verify = render(VERIFY_AUDIT, schema)


def _jsonable(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in entries:
        row = {k: e.get(k) for k in AUDIT_FIELDS}
        row["thread_id"] = key_to_store("thread_id", row["thread_id"])
        out.append(row)
    return out


def audit_param(entry: dict[str, Any]) -> Jsonb:
    """The ``%(audit)s`` parameter of the audited decision statement."""
    return Jsonb(_jsonable([entry]))


class AuditCore(PostgresStore):
    """I/O-free audit operations of the audit store."""

    _q: Any

    @cached_property
    def _auq(self) -> _AuditQueries:
        return _AuditQueries(self._q.schema)

    def _op_append_audit(self, entries: Sequence[dict[str, Any]]) -> Op[Any]:
        rows = _jsonable(entries)
        if rows:
            yield Stmt(self._auq.append, {"entries": Jsonb(rows)}, prepare=False)

    def _op_read_audit(self, thread_id: str) -> Op[list[dict[str, Any]]]:
        rows = yield Stmt(
            self._auq.read, {"thread_id": check_id("thread_id", thread_id)}, fetch=True
        )
        out = []
        for row in rows or ():
            entry = dict(zip(("seq", *AUDIT_FIELDS), row, strict=True))
            entry["at"] = entry["at"].isoformat()
            out.append(entry)
        return out

    def _op_purge_audit(self, thread_id: str) -> Op[Any]:
        params = {"thread_id": check_id("thread_id", thread_id)}
        yield Stmt(_sql.BEGIN)
        # the thread first: a decision being recorded meanwhile takes its
        # decision row, then the head; the purge takes them in the same order
        yield from self._core._op_delete_threads([thread_id])
        rows = yield Stmt(self._auq.purge, params, fetch=True)
        yield Stmt(_sql.COMMIT)
        return int(rows[0][0]) if rows else 0

    def _op_verify_audit(self, thread_id: str) -> Op[AuditVerification]:
        thread_id = check_id("thread_id", thread_id)
        rows = yield Stmt(self._auq.verify, {"thread_id": thread_id}, fetch=True)
        return _chain(thread_id, rows or ())
