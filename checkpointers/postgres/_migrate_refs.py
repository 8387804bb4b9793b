"""Deltas that refer to pending writes an upgrade rewrites, I/O-free.

A channel value that extends its previous version may be stored as a delta
naming the pending writes of the parent checkpoint that hold its new items
(``checkpoint_blobs.writes_of``). ``upgrade_all`` replaces a checkpoint's
pending writes wholesale when an upgrade changes them (a renamed node renames
their task ids, a value upgrade changes their bytes). Before the old writes go,
in the same transaction, every delta that names them is made consistent:

- a write moved to another task id (or index) with exactly the same bytes: the
  delta is re-pointed to it (only its references change; storage stays linear);
- anything else (the bytes changed, an older delta format): the delta is
  rewritten as the full value it stood for (a snapshot), so it no longer
  depends on the writes at all. Deltas built on it read through it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import ormsgpack

from langgraph_durable.checkpointers._delta import (
    _FORMAT_COMPACT,
    _PREFIX,
    DELTA_TYPE,
    BrokenChainError,
    DeltaPolicy,
    _pack_task,
    unpack_task,
)
from langgraph_durable.checkpointers._delta_read import ChainReader

# The deltas that name the writes of the checkpoints whose writes are replaced.
AFFECTED = f"""
SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.version, bl.blob, bl.writes_of
FROM unnest(%(d_threads)b::text[], %(d_ns)b::text[], %(d_ids)b::text[])
     AS d(thread_id, checkpoint_ns, checkpoint_id)
JOIN {{s}}.checkpoint_blobs AS bl
  ON bl.thread_id = d.thread_id AND bl.checkpoint_ns = d.checkpoint_ns
 AND bl.writes_of = d.checkpoint_id AND bl.type = '{DELTA_TYPE}'
FOR UPDATE OF bl"""
# The chains of the deltas to rewrite whole (one range per channel), and the
# pending writes those chains refer to (as they are before the rewrite).
CHAINS = """
WITH h AS (
    SELECT * FROM unnest(%(h_threads)b::text[], %(h_ns)b::text[], %(h_channels)b::text[],
                         %(h_versions)b::text[]) AS h(thread_id, checkpoint_ns, channel, version)
), sp AS (
    SELECT h.thread_id, h.checkpoint_ns, h.channel,
           min(coalesce(b.root_version, b.version)) AS lo, max(h.version) AS hi
    FROM h JOIN {s}.checkpoint_blobs AS b
      ON b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns
     AND b.channel = h.channel AND b.version = h.version
    GROUP BY 1, 2, 3
), v AS (
    SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.version, bl.type, bl.blob,
           bl.base_version, bl.writes_of
    FROM sp JOIN {s}.checkpoint_blobs AS bl
      ON bl.thread_id = sp.thread_id AND bl.checkpoint_ns = sp.checkpoint_ns
     AND bl.channel = sp.channel AND bl.version >= sp.lo AND bl.version <= sp.hi
)
SELECT 'v', thread_id, checkpoint_ns, channel, version, type, blob, base_version, writes_of,
       NULL::int
FROM v
UNION ALL
SELECT 'w', cw.thread_id, cw.checkpoint_ns, cw.channel, cw.checkpoint_id, cw.type, cw.blob,
       NULL, cw.task_id, cw.idx
FROM (SELECT DISTINCT thread_id, checkpoint_ns, channel, writes_of FROM v
      WHERE writes_of IS NOT NULL) AS r
JOIN {s}.checkpoint_writes AS cw
  ON cw.thread_id = r.thread_id AND cw.checkpoint_ns = r.checkpoint_ns
 AND cw.checkpoint_id = r.writes_of AND cw.channel = r.channel AND cw.idx >= 0"""
# Re-pointed deltas get new bytes; deltas rewritten whole lose their chain columns.
UPDATE = """
UPDATE {s}.checkpoint_blobs AS bl
SET type = u.type, blob = u.blob,
    base_version = CASE WHEN u.whole THEN NULL ELSE bl.base_version END,
    root_version = CASE WHEN u.whole THEN NULL ELSE bl.root_version END,
    writes_of = CASE WHEN u.whole THEN NULL ELSE bl.writes_of END
FROM unnest(%(u_threads)b::text[], %(u_ns)b::text[], %(u_channels)b::text[],
            %(u_versions)b::text[], %(u_types)b::text[], %(u_blobs)b::bytea[],
            %(u_whole)b::bool[])
     AS u(thread_id, checkpoint_ns, channel, version, type, blob, whole)
WHERE bl.thread_id = u.thread_id AND bl.checkpoint_ns = u.checkpoint_ns
  AND bl.channel = u.channel AND bl.version = u.version"""

Key = tuple[str, str, str]  # thread, namespace, checkpoint id
OldWrites = dict[Key, dict[tuple[str, int], tuple[str, str, bytes | None]]]
NewWrites = dict[Key, list[tuple[str, int, str, str, bytes | None]]]


def old_writes(row: tuple[Any, ...]) -> dict[tuple[str, int], tuple[str, str, bytes | None]]:
    """A claimed row's stored pending writes: ``(task, idx) -> (channel, type, blob)``."""
    return {
        (t, i): (ch, ty, bl)
        for t, ch, ty, bl, i in zip(
            row[11] or (),
            row[12] or (),
            row[13] or (),
            row[14] or (),
            row[16] or (),
            strict=True,
        )
    }


def _repoint(
    blob: bytes,
    channel: str,
    old: Mapping[tuple[str, int], tuple[str, str, bytes | None]],
    new: Iterable[tuple[str, int, str, str, bytes | None]],
    task_ids: Mapping[str, str],
) -> bytes | None:
    """The delta naming the replacement writes (same bytes), or None if one has none."""
    fmt, n = _PREFIX.unpack_from(blob)
    if fmt != _FORMAT_COMPACT:
        return None
    meta = ormsgpack.unpackb(blob[_PREFIX.size : _PREFIX.size + n])
    new = list(new)
    used: set[tuple[str, int]] = set()
    segs: list[Any] = []
    for g in meta[4]:
        if isinstance(g, int):
            segs.append(g)
            continue
        task, idx = str(unpack_task(g[0])), g[1]
        was = old.get((task, idx))
        if was is None or was[0] != channel:
            return None
        moved = task_ids.get(task, task)
        # the same index first, then any other write of the task with these bytes
        found = sorted(
            (i != idx, i)
            for t, i, ch, ty, bl in new
            if t == moved and ch == channel and (ty, bl) == was[1:] and (t, i) not in used
        )
        if not found:
            return None
        used.add((moved, found[0][1]))
        segs.append([_pack_task(moved), found[0][1]])
    packed = ormsgpack.packb([*meta[:4], segs, *meta[5:]])
    return _PREFIX.pack(_FORMAT_COMPACT, len(packed)) + packed + blob[_PREFIX.size + n :]


class RefFix:
    """What one batch does to the deltas naming the writes it replaces."""

    def __init__(self) -> None:
        self.update: dict[str, list[Any]] = {
            k: []
            for k in (
                "u_threads",
                "u_ns",
                "u_channels",
                "u_versions",
                "u_types",
                "u_blobs",
                "u_whole",
            )
        }
        self.heads: dict[str, list[Any]] = {
            k: [] for k in ("h_threads", "h_ns", "h_channels", "h_versions")
        }

    def _add(
        self, thread: str, ns: str, channel: str, version: str, type_: str, blob: bytes, whole: bool
    ) -> None:
        for k, v in zip(
            self.update, (thread, ns, channel, version, type_, blob, whole), strict=True
        ):
            self.update[k].append(v)

    def plan(
        self,
        affected: Iterable[tuple[Any, ...]],
        old: OldWrites,
        new: NewWrites,
        task_ids: Mapping[Key, Mapping[str, str]],
    ) -> None:
        """Re-point what can be, and list the deltas to rewrite whole."""
        for thread, ns, channel, version, blob, of in affected:
            key = (thread, ns, of)
            try:
                moved = _repoint(
                    blob, channel, old.get(key, {}), new.get(key, ()), task_ids.get(key, {})
                )
            except Exception:  # a malformed delta: the whole-value read says what is wrong
                moved = None
            if moved is not None:
                if moved != blob:
                    self._add(thread, ns, channel, version, DELTA_TYPE, moved, False)
                continue
            for k, v in zip(self.heads, (thread, ns, channel, version), strict=True):
                self.heads[k].append(v)

    def rewrite_whole(self, rows: Iterable[tuple[Any, ...]], policy: DeltaPolicy) -> None:
        """Rebuild each listed delta from its chain (the rows of ``CHAINS``)."""
        chains: dict[tuple[str, str, str], dict[str, tuple[Any, ...]]] = {}
        writes: dict[tuple[str, str], dict[tuple[str, str, int], tuple[str, bytes | None]]] = {}
        for kind, thread, ns, channel, ver, type_, blob, base, extra, idx in rows:
            if kind == "v":
                chains.setdefault((thread, ns, channel), {})[ver] = (type_, blob, base, extra)
            else:
                writes.setdefault((thread, ns), {})[(ver, extra, idx)] = (type_, blob)
        readers: dict[tuple[str, str, str], ChainReader] = {}
        for thread, ns, channel, version in zip(*self.heads.values(), strict=True):
            key = (thread, ns, channel)
            reader = readers.get(key)
            if reader is None:
                reader = readers[key] = ChainReader(
                    chains.get(key, {}), writes.get((thread, ns), {}), policy
                )
            try:
                type_, data, _ = reader.read(version)
            except BrokenChainError as exc:
                raise BrokenChainError(
                    f"cannot rewrite the delta {version!r} of channel {channel!r} of thread "
                    f"{thread!r} (namespace {ns!r}) whole before its writes are replaced: {exc}"
                ) from exc
            self._add(thread, ns, channel, version, type_, data, True)
