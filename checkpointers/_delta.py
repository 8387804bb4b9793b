"""Delta storage of channel values that grow by appending (I/O-free, backend-agnostic).

A channel reduced with ``operator.add`` or ``add_messages`` gets a new version
at almost every step, and the new version starts with every item of the old
one. Storing each version whole makes a thread's storage grow with the square
of its steps. Here a version that extends a stored one is kept as a *delta*:
the version it extends (its *base*) plus the bytes of the new items. Full
*snapshots* bound how far a read walks back; one is written when the deltas
since the last snapshot outweigh it (:class:`DeltaPolicy`), so the snapshots
grow geometrically and total storage stays linear in the payload.

Exactness is by construction, at the byte level. The saver's serde turns a
list (or dict) into one msgpack container: a header that holds the item
count, then the items' encodings back to back, each independent of the
others. A new value is stored as a delta only when its serialized body
*starts with the stored body of the base byte for byte*; reading
concatenates the base's body and the delta's suffix under the new header,
which rebuilds exactly the bytes a full write would have stored, and the
serde turns them into exactly the value that was put. Nothing depends on how
items compare with ``==``: an item replaced by id (``add_messages``), edited
in place, removed or moved changes the bytes, and the value is stored whole.
A wrong or stale cache can only cost space, never correctness, because a
delta names the exact stored version whose bytes it extends.

The pending writes of the step that produced a version usually hold its new
items already (a node returns ``{"messages": [msg]}``; ``put_writes`` stores
that list before ``put`` stores the grown list). A delta then *refers to*
those writes instead of copying their bytes (format 2): it names the
checkpoint the writes belong to and, per write, its task id and index; the
suffix is rebuilt from the writes' stored bytes (their container header cut
off). Only byte-identical bodies are referenced, the CRC covers the rebuilt
value, and backends check when writing the delta that each referenced write
is stored with exactly those bytes; deletes keep referenced writes as long
as a kept delta needs them.

Backends call :func:`encode_value` on ``put`` and read with
:class:`~langgraph_durable.checkpointers._delta_read.ChainReader`, and keep one
:class:`ChainCache` per saver so a ``put`` knows the
bytes of the version it may extend without reading them back. They must
update the cache only after their write committed, and must make sure a
delta's base still exists when the delta is written (another process may
have deleted it); :func:`~langgraph_durable.checkpointers._delta_read.needed_versions` tells
``prune`` what a kept version depends on.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import ormsgpack

from langgraph_durable.checkpointers._delta_policy import (
    DEFAULT_POLICY,
    BrokenChainError,
    DeltaPolicy,
    resolve_policy,
)

__all__ = [
    "DEFAULT_POLICY",
    "DELTA_TYPE",
    "BrokenChainError",
    "DeltaPolicy",
    "Link",
    "Stored",
    "WriteRef",
    "delta_base",
    "delta_writes",
    "encode_value",
    "resolve_policy",
    "write_body",
]

DELTA_TYPE = "delta"
"""The type tag of a delta row, stored where a full value stores its serde type
("msgpack", ...). No serde knows it, so an older reader fails loudly on a delta
instead of returning a wrong value."""

# Serde type tags whose payload is one msgpack object, the only ones whose
# container layout we rely on.
_MSGPACK_TYPES = frozenset({"msgpack"})

# A delta blob: 1 format byte, 4-byte big-endian length of the msgpack meta,
# the meta, then the suffix bytes (the new items' encodings).
_FORMAT = 1
# Format 2: the meta also names the checkpoint whose pending writes hold parts
# of the suffix, and the segments: [task_id, idx] for a write's body, or an
# int n for the next n bytes stored after the meta.
_FORMAT_REFS = 2
# Format 3 (compact): the meta is [header, depth, body length, crc, segments];
# the base version and the checkpoint whose writes the segments name are
# stored beside the blob (Postgres columns), and a task id that is a canonical
# UUID is 16 bytes instead of 36 characters.
_FORMAT_COMPACT = 3
_PREFIX = struct.Struct(">BI")


def _pack_task(task_id: str) -> str | bytes:
    """A task id as stored in a compact delta: 16 bytes when that reads back the same."""
    if len(task_id) == 36:
        try:
            packed = uuid.UUID(task_id)
        except ValueError:
            return task_id
        if str(packed) == task_id:
            return packed.bytes
    return task_id


def unpack_task(stored: object) -> object:
    """The task id a compact delta names (the inverse of :func:`_pack_task`)."""
    if isinstance(stored, bytes) and len(stored) == 16:
        h = stored.hex()  # str(uuid.UUID(bytes=...)), without the object
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return stored


@dataclass(frozen=True, slots=True)
class WriteRef:
    """A stored pending write a delta may refer to instead of copying its items.

    Attributes:
        task_id: The write's task id.
        idx: The write's index within the task (>= 0: a regular channel).
        type: The serde type tag of the stored write.
        blob: The stored write's bytes (the serialized list the node returned).
    """

    task_id: str
    idx: int
    type: str
    blob: bytes


def write_body(type_: str, blob: bytes | None) -> bytes | None:
    """The items' bytes of a stored list write (its container header cut off)."""
    if blob is None or type_ not in _MSGPACK_TYPES:
        return None
    h = _header_len(blob)
    if h is None or blob[0] in (0xDE, 0xDF) or 0x80 <= blob[0] <= 0x8F:
        return None  # a map's items are key/value pairs: only lists are referenced
    return blob[h:]


def _segments(suffix: bytes, writes: Iterable[WriteRef]) -> tuple[list[object], bytes] | None:
    """Cover ``suffix`` with write bodies where they match, in order; None if none does."""
    bodies = [(w, b) for w in writes if (b := write_body(w.type, w.blob))]
    if not bodies:
        return None
    segs: list[object] = []
    tail: list[bytes] = []
    used: set[tuple[str, int]] = set()
    pos = inline_from = 0
    referenced = False
    while pos < len(suffix):
        for w, body in bodies:
            if (w.task_id, w.idx) not in used and suffix.startswith(body, pos):
                if inline_from < pos:
                    segs.append(pos - inline_from)
                    tail.append(suffix[inline_from:pos])
                segs.append([w.task_id, w.idx])
                used.add((w.task_id, w.idx))
                pos += len(body)
                inline_from = pos
                referenced = True
                break
        else:
            # items no write holds (another reducer's output): kept inline
            pos = len(suffix)
    if not referenced:
        return None
    if inline_from < len(suffix):
        segs.append(len(suffix) - inline_from)
        tail.append(suffix[inline_from:])
    return segs, b"".join(tail)


@dataclass(frozen=True, slots=True)
class Stored:
    """What a backend stores for one channel version.

    Attributes:
        type: The type tag to store: the serde's own for a full value,
            :data:`DELTA_TYPE` for a delta.
        blob: The bytes to store.
        base: For a delta, the version it extends (same thread, namespace and
            channel); ``None`` for a full value. Backends that can query it
            (a column) use it to find what a kept version depends on.
        root: For a delta, the whole value its chain starts from: every
            version of the chain lies between ``root`` and this one (bases are
            older than what extends them), so a backend can fetch a chain with
            one range scan. ``None`` for a full value.
        writes_of: For a delta that refers to pending writes, the checkpoint
            they belong to (``refs`` lists them); else ``None``.
        refs: ``(task_id, idx, blob)`` of each referenced write: the backend
            checks, in the statement that stores the delta, that each is stored
            with exactly these bytes.
    """

    type: str
    blob: bytes
    base: str | None = None
    root: str | None = None
    writes_of: str | None = None
    refs: tuple[tuple[str, int, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class Link:
    """The state of one stored version that the next ``put`` may extend.

    Attributes:
        version: The channel version.
        type: The serde type tag of the whole value ("msgpack").
        header: The msgpack container header of the whole value.
        body: The bytes after the header: the items' encodings.
        depth: Deltas between this version and its snapshot (0 for a snapshot).
        delta_bytes: Stored cost of those deltas (blobs plus ``row_cost`` each).
        snapshot_bytes: Stored cost of the snapshot the chain starts from.
        root: The version of that snapshot (this version for a snapshot).
    """

    version: str
    type: str
    header: bytes
    body: bytes
    depth: int = 0
    delta_bytes: int = 0
    snapshot_bytes: int = 0
    root: str = ""

    @property
    def data(self) -> bytes:
        """The full serialized value, as ``serde.loads_typed`` expects it."""
        return self.header + self.body


def _header_len(data: bytes) -> int | None:
    """Length of the msgpack array/map header ``data`` starts with, or None."""
    if not data:
        return None
    b = data[0]
    if 0x80 <= b <= 0x9F:  # fixmap, fixarray
        return 1
    if b in (0xDC, 0xDE):  # array16, map16
        return 3 if len(data) >= 3 else None
    if b in (0xDD, 0xDF):  # array32, map32
        return 5 if len(data) >= 5 else None
    return None


def snapshot_link(version: str, type_: str, data: bytes, policy: DeltaPolicy) -> Link | None:
    """The chain state of a value stored whole, or None if it can never be extended."""
    if type_ not in _MSGPACK_TYPES:
        return None
    h = _header_len(data)
    if h is None:
        return None
    return Link(version, type_, data[:h], data[h:], 0, 0, len(data) + policy.row_cost, version)


def encode_value(
    prev: Link | None,
    version: str,
    type_: str,
    data: bytes,
    policy: DeltaPolicy = DEFAULT_POLICY,
    *,
    writes: Iterable[WriteRef] = (),
    writes_of: str | None = None,
    compact: bool = False,
) -> tuple[Stored, Link | None]:
    """Decide how to store ``(type_, data)`` (the serde's output) as ``version``.

    Args:
        prev: A stored version of the same thread, namespace and channel whose
            bytes the new value may extend (usually the previous version, from
            the saver's :class:`ChainCache`), or None.
        version: The new version.
        type_: The serde type tag of the new value.
        data: The serialized new value.
        policy: When to write a snapshot instead of a delta.
        writes: Stored pending writes to this channel of checkpoint
            ``writes_of`` (the step that produced the value): a delta refers
            to those whose items it appends instead of copying them.
        writes_of: The checkpoint ``writes`` belong to.
        compact: Write the compact format, whose bytes leave out the base
            version and ``writes_of``: for backends that store both beside
            the blob (columns) and hand them back to the reader.

    Returns:
        What to store, and the new version's chain state for the cache (None
        when the value can never be extended, e.g. it is not a container).
    """
    full = Stored(type_, data)
    if (
        prev is None
        or type_ != prev.type
        or len(data) < policy.min_size
        or (policy.max_depth is not None and prev.depth >= policy.max_depth)
    ):
        return full, snapshot_link(version, type_, data, policy)
    h = _header_len(data)
    if h is None or not data.startswith(prev.body, h):
        return full, snapshot_link(version, type_, data, policy)
    header = data[:h]
    suffix = data[h + len(prev.body) :]
    root = prev.root or prev.version
    writes = list(writes)
    covered = _segments(suffix, writes) if writes_of is not None else None
    refs: tuple[tuple[str, int, bytes], ...] = ()
    if covered is not None:
        segs, tail = covered
        by_key = {(w.task_id, w.idx): w.blob for w in writes}
        refs = tuple((t, i, by_key[(t, i)]) for t, i in (g for g in segs if isinstance(g, list)))
    else:
        segs, tail = ([len(suffix)] if suffix else []), suffix
    # The checksum of the whole body lets a read detect a chain whose rows were
    # rewritten in place after this delta was written (instead of returning a
    # mix of old and new bytes).
    head = _DeltaHead(prev, header, len(data) - h, zlib.crc32(memoryview(data)[h:]), root)
    if compact:
        blob = _compact_blob(head, segs, tail)
    elif refs:
        blob = _refs_blob(head, writes_of, segs, tail)
    else:
        blob = _plain_blob(head, suffix)
    # a read fetches each referenced write too: charge it like a row
    cost = len(blob) + policy.row_cost * (1 + len(refs))
    if prev.delta_bytes + cost > policy.ratio * prev.snapshot_bytes:
        return full, snapshot_link(version, type_, data, policy)
    link = Link(
        version,
        type_,
        header,
        prev.body + suffix,
        prev.depth + 1,
        prev.delta_bytes + cost,
        prev.snapshot_bytes,
        root,
    )
    if refs:
        return Stored(DELTA_TYPE, blob, prev.version, root, writes_of, refs), link
    return Stored(DELTA_TYPE, blob, prev.version, root), link


@dataclass(frozen=True, slots=True)
class _DeltaHead:
    """What every delta format records of the value: its base, header, body length, CRC."""

    prev: Link
    header: bytes
    body_len: int
    crc: int
    root: str


def _plain_blob(head: _DeltaHead, suffix: bytes) -> bytes:
    """Format 1: the base version in the meta, the new items' bytes after it."""
    prev = head.prev
    meta = ormsgpack.packb(
        [prev.version, head.header, prev.depth + 1, head.body_len, head.crc, head.root]
    )
    return _PREFIX.pack(_FORMAT, len(meta)) + meta + suffix


def _refs_blob(head: _DeltaHead, writes_of: str | None, segs: list[object], tail: bytes) -> bytes:
    """Format 2: the meta names the writes of ``writes_of`` that hold parts of the suffix."""
    prev = head.prev
    meta = ormsgpack.packb(
        [prev.version, head.header, prev.depth + 1, head.body_len, head.crc, writes_of, segs]
    )
    return _PREFIX.pack(_FORMAT_REFS, len(meta)) + meta + tail


def _compact_blob(head: _DeltaHead, segs: list[object], tail: bytes) -> bytes:
    """Format 3: base and ``writes_of`` live beside the blob (the backend's columns)."""
    meta = ormsgpack.packb(
        [
            head.header,
            head.prev.depth + 1,
            head.body_len,
            head.crc,
            [[_pack_task(g[0]), g[1]] if isinstance(g, list) else g for g in segs],
        ]
    )
    return _PREFIX.pack(_FORMAT_COMPACT, len(meta)) + meta + tail


@dataclass(frozen=True, slots=True)
class _Delta:
    base: str
    header: bytes
    depth: int
    body_len: int
    crc: int
    writes_of: str | None
    segs: list[Any] | None
    tail: memoryview


def _parse_delta(blob: bytes) -> _Delta:
    try:
        fmt, n = _PREFIX.unpack_from(blob)
        if fmt not in (_FORMAT, _FORMAT_REFS):
            raise BrokenChainError(f"unknown delta format {fmt}")
        meta = ormsgpack.unpackb(blob[_PREFIX.size : _PREFIX.size + n])
        base, header, depth, body_len, crc, extra = meta[:6]
        tail = memoryview(blob)[_PREFIX.size + n :]
        if fmt == _FORMAT:
            return _Delta(base, header, depth, body_len, crc, None, None, tail)
        segs = meta[6]
        if not isinstance(extra, str) or not isinstance(segs, list):
            raise BrokenChainError("malformed delta: bad write references")
        return _Delta(base, header, depth, body_len, crc, extra, segs, tail)
    except (struct.error, ormsgpack.MsgpackDecodeError, TypeError, ValueError) as exc:
        if isinstance(exc, BrokenChainError):
            raise
        raise BrokenChainError(f"malformed delta: {exc}") from exc


def delta_base(type_: str, blob: bytes | None) -> str | None:
    """The version a stored row extends, or None if the row is a full value."""
    if type_ != DELTA_TYPE:
        return None
    if blob is None:
        raise BrokenChainError("delta row without bytes")
    return _parse_delta(blob).base


def delta_writes(type_: str, blob: bytes | None) -> tuple[str, list[tuple[str, int]]] | None:
    """``(checkpoint id, [(task_id, idx)...])`` of the writes a stored row refers to, or None."""
    if type_ != DELTA_TYPE or blob is None:
        return None
    d = _parse_delta(blob)
    if d.writes_of is None or d.segs is None:
        return None
    return d.writes_of, [(g[0], g[1]) for g in d.segs if isinstance(g, list)]


WriteRows = Mapping[tuple[str, str, int], tuple[str, bytes | None]]
"""Stored pending writes by ``(checkpoint id, task id, idx)``: ``(type, blob)``."""
