"""Bulk schema-version upgrades on PostgreSQL: the saver's side of ``MigrationStore``.

A batch is one transaction: ``SELECT ... FOR UPDATE SKIP LOCKED`` claims up to
``limit`` checkpoints behind the target version in key order (the row locks are
the claims: a concurrent worker skips them, and a crashed worker's claims vanish
with its transaction), every claimed checkpoint is upgraded in Python, and all
of them are rewritten with one ``UPDATE ... FROM unnest(...)`` (plus one
statement per checkpoint whose pending writes changed), then COMMIT. A row
another worker committed meanwhile is re-checked by PostgreSQL under the lock
(``schema_version < target``), so no checkpoint is upgraded twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from langgraph.checkpoint.base import CheckpointTuple
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers.postgres import _migrate_refs, _sql
from langgraph_durable.checkpointers.postgres._metadata import encode_metadata
from langgraph_durable.checkpointers.postgres._stmt import Op
from langgraph_durable.checkpointers.postgres._store import PostgresStore
from langgraph_durable.migrations import (
    BatchOutcome,
    CheckpointRef,
    ItemOutcome,
    Upgrade,
    VersionStatus,
    untagged,
)

_COLS = (
    "c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, "
    "c.metadata, c.metadata_exact, c.schema_version"
)
# The newest checkpoint of the row's thread+namespace (a primary-key probe).
_LATEST = (
    " AND c.checkpoint_id = (SELECT max(l.checkpoint_id) FROM {s}.checkpoints AS l"
    " WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)"
)
# Ordered like checkpoints_schema_version_idx, so the cursor is an index range.
_CLAIM = (
    f"SELECT {_COLS} FROM {{s}}.checkpoints AS c"
    " WHERE c.schema_version < %(below)s{latest}"
    " AND (c.schema_version, c.thread_id, c.checkpoint_ns, c.checkpoint_id)"
    " > (%(c_version)s, %(c_thread)s, %(c_ns)s, %(c_id)s)"
    " ORDER BY c.schema_version, c.thread_id, c.checkpoint_ns, c.checkpoint_id"
    " LIMIT %(limit)s FOR UPDATE OF c SKIP LOCKED"
)
_SAMPLE = (
    f"SELECT {_COLS} FROM {{s}}.checkpoints AS c WHERE c.schema_version = %(version)s{{latest}}"
    " ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id LIMIT %(limit)s"
)
_COUNTS = (
    "SELECT c.schema_version, count(*) FROM {s}.checkpoints AS c"
    " WHERE c.schema_version < %(below)s{latest} GROUP BY 1 ORDER BY 1"
)
# Parameters go in binary (%(x)b): text format would quote every array element.
REWRITE = """
WITH b AS (
    INSERT INTO {s}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT * FROM unnest(%(b_threads)b::text[], %(b_ns)b::text[], %(b_channels)b::text[],
                         %(b_versions)b::text[], %(b_types)b::text[], %(b_blobs)b::bytea[])
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
UPDATE {s}.checkpoints AS c
SET checkpoint = u.checkpoint, metadata = u.metadata, metadata_exact = u.metadata_exact,
    schema_version = %(target)b
FROM unnest(%(threads)b::text[], %(ns)b::text[], %(ids)b::text[], %(checkpoints)b::jsonb[],
            %(metadatas)b::jsonb[], %(exacts)b::bytea[])
     AS u(thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata, metadata_exact)
WHERE c.thread_id = u.thread_id AND c.checkpoint_ns = u.checkpoint_ns
  AND c.checkpoint_id = u.checkpoint_id"""
# Pending writes are replaced wholesale (renamed tasks, upgraded values), with
# their wait-index entries: deleted here, re-inserted by REWRITE_WRITES.
DELETE_WRITES = """
WITH d AS (
    SELECT * FROM unnest(%(d_threads)b::text[], %(d_ns)b::text[], %(d_ids)b::text[])
        AS d(thread_id, checkpoint_ns, checkpoint_id)
), w AS (
    DELETE FROM {s}.checkpoint_writes AS cw USING d
    WHERE cw.thread_id = d.thread_id AND cw.checkpoint_ns = d.checkpoint_ns
      AND cw.checkpoint_id = d.checkpoint_id
)
DELETE FROM {s}.durable_waits AS dw USING d
WHERE dw.thread_id = d.thread_id AND dw.checkpoint_ns = d.checkpoint_ns
  AND dw.checkpoint_id = d.checkpoint_id"""
REWRITE_WRITES = """
WITH w AS (
    INSERT INTO {s}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id,
                                       task_path, idx, channel, type, blob)
    SELECT * FROM unnest(%(threads)b::text[], %(ns)b::text[], %(ids)b::text[],
                         %(tasks)b::text[], %(paths)b::text[], %(idxs)b::int[],
                         %(channels)b::text[], %(types)b::text[], %(blobs)b::bytea[])
)
INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns, checkpoint_id, task_id,
                               kind, deadline, approvers, escalation_level, value_type, value)
SELECT u.thread_id, u.interrupt_id, u.checkpoint_ns, u.checkpoint_id, u.task_id, u.kind,
       u.deadline,
       coalesce((SELECT array_agg(a) FROM jsonb_array_elements_text(u.approvers) AS a), '{{}}'),
       u.level, u.value_type, u.value
FROM unnest(%(v_threads)b::text[], %(v_ids)b::text[], %(v_ns)b::text[], %(v_cids)b::text[],
            %(v_tasks)b::text[], %(v_kinds)b::text[], %(v_deadlines)b::timestamptz[],
            %(v_approvers)b::jsonb[], %(v_levels)b::int[], %(v_types)b::text[],
            %(v_values)b::bytea[])
     AS u(thread_id, interrupt_id, checkpoint_ns, checkpoint_id, task_id, kind, deadline,
          approvers, level, value_type, value)
ON CONFLICT (thread_id, interrupt_id) DO UPDATE SET
    checkpoint_ns = EXCLUDED.checkpoint_ns, checkpoint_id = EXCLUDED.checkpoint_id,
    task_id = EXCLUDED.task_id,
    kind = EXCLUDED.kind, deadline = EXCLUDED.deadline, approvers = EXCLUDED.approvers,
    escalation_level = EXCLUDED.escalation_level, value_type = EXCLUDED.value_type,
    value = EXCLUDED.value"""
STATUS = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id) thread_id, checkpoint_id, schema_version
    FROM {s}.checkpoints WHERE checkpoint_ns = ''
    ORDER BY thread_id, checkpoint_id DESC
), t AS (
    SELECT h.schema_version, count(*) AS threads,
           count(*) FILTER (WHERE EXISTS (
               SELECT 1 FROM {s}.checkpoint_writes AS w
               WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = ''
                 AND w.checkpoint_id = h.checkpoint_id AND w.channel = '__interrupt__'
           )) AS paused
    FROM heads AS h GROUP BY 1
), c AS (
    SELECT schema_version, count(*) AS checkpoints FROM {s}.checkpoints GROUP BY 1
)
SELECT coalesce(c.schema_version, t.schema_version), coalesce(t.threads, 0),
       coalesce(c.checkpoints, 0), coalesce(t.paused, 0)
FROM c FULL JOIN t ON c.schema_version = t.schema_version
ORDER BY 1"""

_START = (-1, "", "", "")
_PULL_PATH = "~__pregel_pull, {node}"


class _MigrationQueries:
    def __init__(self, schema: str) -> None:
        def r(template: str) -> str:
            return _sql.render(template, schema)

        def tuples(inner: str) -> str:
            return r(_sql.SELECT_TUPLES.replace("{inner}", inner))

        self.claim = {
            a: tuples(_CLAIM.replace("{latest}", "" if a else _LATEST)) for a in (True, False)
        }
        self.sample = {
            a: tuples(_SAMPLE.replace("{latest}", "" if a else _LATEST)) for a in (True, False)
        }
        self.counts = {
            a: r(_COUNTS.replace("{latest}", "" if a else _LATEST)) for a in (True, False)
        }
        self.rewrite = r(REWRITE)
        self.delete_writes = r(DELETE_WRITES)
        self.rewrite_writes = r(REWRITE_WRITES)
        self.ref_affected = r(_migrate_refs.AFFECTED)
        self.ref_chains = r(_migrate_refs.CHAINS)
        self.ref_update = r(_migrate_refs.UPDATE)
        self.status = r(STATUS)


T = TypeVar("T")


class PostgresMigrationCore(PostgresStore):
    """I/O-free operations of ``MigrationStore``, the base of ``saver.migration_store``."""

    _mq_cache: _MigrationQueries | None = None

    @property
    def _mq(self) -> _MigrationQueries:
        # rendered on first use (no I/O), so savers that never migrate pay nothing
        if self._mq_cache is None:
            self._mq_cache = _MigrationQueries(self._q.schema)
        return self._mq_cache

    def _op_migration_counts(self, below: int, all_history: bool) -> Op[dict[int, int]]:
        rows = yield _sql_stmt(self._mq.counts[all_history], {"below": below}, fetch=True)
        return {int(v): int(n) for v, n in rows or ()}

    def _op_migration_sample(
        self, version: int, all_history: bool, limit: int
    ) -> Op[list[CheckpointTuple]]:
        rows = yield _sql_stmt(
            self._mq.sample[all_history], {"version": version, "limit": limit}, fetch=True
        )
        values = self._core._values(rows or ())
        return [self._core._parse_raw(row, values) for row in rows or ()]

    def _op_migration_status(self) -> Op[list[VersionStatus]]:
        rows = yield _sql_stmt(self._mq.status, None, fetch=True)
        return [VersionStatus(int(v), int(t), int(c), int(p)) for v, t, c, p in rows or ()]

    def _op_migration_batch(
        self,
        below: int,
        all_history: bool,
        cursor: Any,
        limit: int,
        upgrade: Callable[[CheckpointTuple, int], Upgrade],
    ) -> Op[BatchOutcome]:
        c_version, c_thread, c_ns, c_id = cursor if cursor is not None else _START
        yield _sql_stmt(_sql.BEGIN)
        rows = yield _sql_stmt(
            self._mq.claim[all_history],
            {
                "below": below,
                "limit": limit,
                "c_version": c_version,
                "c_thread": c_thread,
                "c_ns": c_ns,
                "c_id": c_id,
            },
            fetch=True,
        )
        rows = sorted(rows or (), key=lambda r: (int(r[7] or 0), r[0], r[1], r[2]))
        items: list[ItemOutcome] = []
        batch = _BatchRows()
        values = self._core._values(rows)
        for row in rows:
            ref = CheckpointRef(row[0], row[1], row[2], int(row[7] or 0))
            try:
                upgraded = self._upgrade_row(row, values, ref, upgrade)
            except Exception as exc:
                items.append(ItemOutcome(ref, exc))
                continue
            batch.add(ref, row, *upgraded)
            items.append(ItemOutcome(ref))
        if batch.checkpoints["ids"]:
            yield _sql_stmt(
                self._mq.rewrite,
                {"target": below, **batch.checkpoints, **batch.blobs},
                prepare=False,
            )
        if batch.writes.deleted["d_ids"]:
            yield from self._op_replace_writes(batch)
        yield _sql_stmt(_sql.COMMIT)
        if len(rows) < limit:
            return BatchOutcome(items, 0, None)
        last = rows[-1]
        return BatchOutcome(items, 0, (int(last[7] or 0), last[0], last[1], last[2]))

    def _upgrade_row(
        self,
        row: tuple[Any, ...],
        values: Any,
        ref: CheckpointRef,
        upgrade: Callable[[CheckpointTuple, int], Upgrade],
    ) -> tuple[Upgrade, dict[str, Any], Any, bytes | None, Any, Any]:
        """One claimed row upgraded and encoded for the rewrite.

        Returns ``(upgrade, checkpoint jsonb, metadata jsonb, exact metadata,
        blob columns, encoded pending writes or None)``.
        """
        raw = self._core._parse_raw(row, values)
        up = upgrade(raw, ref.schema_version)
        # the version goes to its column: the metadata stays as written
        new = untagged(up.tuple, raw)
        stored, blob_parts = self._core._split_values(new.checkpoint, up.new_versions)
        json_md, exact_md = encode_metadata(dict(new.metadata), self._core.serde)
        new_writes = self._encode_writes(row, new, up) if up.writes_changed else None
        return up, stored, json_md, exact_md, blob_parts, new_writes

    def _op_replace_writes(self, batch: _BatchRows) -> Op[None]:
        """Replace the batch's changed pending writes, fixing the deltas that refer to them."""
        writes = batch.writes
        fix = _migrate_refs.RefFix()
        affected = yield _sql_stmt(self._mq.ref_affected, writes.deleted, fetch=True, prepare=False)
        fix.plan(affected or (), batch.replaced_old, batch.replaced_new, batch.moved_tasks)
        if fix.heads["h_versions"]:
            chains = yield _sql_stmt(self._mq.ref_chains, fix.heads, fetch=True, prepare=False)
            fix.rewrite_whole(chains or (), self._core.delta_policy)
        if fix.update["u_versions"]:
            yield _sql_stmt(self._mq.ref_update, fix.update, prepare=False)
        yield _sql_stmt(self._mq.delete_writes, writes.deleted, prepare=False)
        yield _sql_stmt(self._mq.rewrite_writes, writes.params(), prepare=False)

    def _encode_writes(self, row: tuple[Any, ...], new: CheckpointTuple, up: Upgrade) -> Any:
        """Rows of the upgraded pending writes and of their wait-index entries."""
        from langgraph.checkpoint.base import WRITES_IDX_MAP

        from langgraph_durable.checkpointers.postgres._put_params import marked_interrupts

        paths = dict(zip(row[11] or [], row[15] or [], strict=True))
        back = {v: k for k, v in up.task_ids.items()}
        position: dict[str, int] = {}
        rows, waits = [], []
        for tid, ch, val in new.pending_writes or ():
            node = up.task_nodes.get(tid)
            path = _PULL_PATH.format(node=node) if node else paths.get(back.get(tid, tid), "")
            idx = position.get(tid, 0)
            position[tid] = idx + 1
            type_, blob = self._encode_value(val)
            rows.append((tid, path or "", WRITES_IDX_MAP.get(ch, idx), ch, type_, blob))
            if ch == "__interrupt__":
                for interrupt_id, info, value in marked_interrupts(val):
                    v_type, v_blob = self._encode_value(value)
                    waits.append((interrupt_id, info, v_type, v_blob, tid))
        return rows, waits


class _BatchRows:
    """Column arrays of what one batch rewrites: checkpoints, blobs and pending writes.

    The pending writes a checkpoint replaces are kept old and new (by checkpoint
    key) with the tasks it renamed: the deltas that refer to them are fixed from
    these.
    """

    def __init__(self) -> None:
        self.checkpoints: dict[str, list[Any]] = {
            k: [] for k in ("threads", "ns", "ids", "checkpoints", "metadatas", "exacts")
        }
        self.blobs: dict[str, list[Any]] = {
            k: [] for k in ("b_threads", "b_ns", "b_channels", "b_versions", "b_types", "b_blobs")
        }
        self.writes = _WriteRows()
        self.replaced_old: _migrate_refs.OldWrites = {}
        self.replaced_new: _migrate_refs.NewWrites = {}
        self.moved_tasks: dict[_migrate_refs.Key, dict[str, str]] = {}

    def add(
        self,
        ref: CheckpointRef,
        row: tuple[Any, ...],
        up: Upgrade,
        stored: dict[str, Any],
        json_md: Any,
        exact_md: bytes | None,
        blob_parts: Any,
        new_writes: Any,
    ) -> None:
        cp = self.checkpoints
        cp["threads"].append(ref.thread_id)
        cp["ns"].append(ref.checkpoint_ns)
        cp["ids"].append(ref.checkpoint_id)
        cp["checkpoints"].append(Jsonb(stored))
        cp["metadatas"].append(Jsonb(json_md))
        cp["exacts"].append(exact_md)
        for ch, ver, ty, bl in zip(*blob_parts, strict=True):
            self.blobs["b_threads"].append(ref.thread_id)
            self.blobs["b_ns"].append(ref.checkpoint_ns)
            self.blobs["b_channels"].append(ch)
            self.blobs["b_versions"].append(ver)
            self.blobs["b_types"].append(ty)
            self.blobs["b_blobs"].append(bl)
        if new_writes is not None:
            self.writes.add(ref, new_writes)
            key = (ref.thread_id, ref.checkpoint_ns, ref.checkpoint_id)
            self.replaced_old[key] = _migrate_refs.old_writes(row)
            self.replaced_new[key] = [(t, i, ch, ty, bl) for t, _, i, ch, ty, bl in new_writes[0]]
            self.moved_tasks[key] = up.task_ids


class _WriteRows:
    """Column arrays of the pending writes (and wait entries) a batch rewrites."""

    _COLS = ("threads", "ns", "ids", "tasks", "paths", "idxs", "channels", "types", "blobs")

    def __init__(self) -> None:
        self.deleted: dict[str, list[Any]] = {"d_threads": [], "d_ns": [], "d_ids": []}
        self.cols: dict[str, list[Any]] = {k: [] for k in self._COLS}
        self.waits: dict[str, list[Any]] = {
            k: []
            for k in (
                "v_threads",
                "v_ids",
                "v_ns",
                "v_cids",
                "v_tasks",
                "v_kinds",
                "v_deadlines",
                "v_approvers",
                "v_levels",
                "v_types",
                "v_values",
            )
        }

    def add(self, ref: CheckpointRef, encoded: Any) -> None:
        rows, waits = encoded
        self.deleted["d_threads"].append(ref.thread_id)
        self.deleted["d_ns"].append(ref.checkpoint_ns)
        self.deleted["d_ids"].append(ref.checkpoint_id)
        for row in rows:
            for k, v in zip(
                self._COLS, (ref.thread_id, ref.checkpoint_ns, ref.checkpoint_id, *row), strict=True
            ):
                self.cols[k].append(v)
        for interrupt_id, info, v_type, v_blob, task_id in waits:
            w = self.waits
            w["v_threads"].append(ref.thread_id)
            w["v_ids"].append(interrupt_id)
            w["v_ns"].append(ref.checkpoint_ns)
            w["v_cids"].append(ref.checkpoint_id)
            w["v_tasks"].append(task_id)
            w["v_kinds"].append(info.kind)
            w["v_deadlines"].append(info.deadline)
            w["v_approvers"].append(Jsonb(list(info.approvers)))
            w["v_levels"].append(info.escalation_level)
            w["v_types"].append(v_type)
            w["v_values"].append(v_blob)

    def params(self) -> dict[str, Any]:
        return {**self.cols, **self.waits}


def _sql_stmt(query: str, params: Any = None, *, fetch: bool = False, prepare: Any = None) -> Any:
    from langgraph_durable.checkpointers.postgres._core import Stmt

    return Stmt(query, params, fetch=fetch, prepare=prepare)
