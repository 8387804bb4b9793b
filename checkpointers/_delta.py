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

Backends call :func:`encode_value` on ``put`` and :func:`decode_value` on
reads, and keep one :class:`ChainCache` per saver so a ``put`` knows the
bytes of the version it may extend without reading them back. They must
update the cache only after their write committed, and must make sure a
delta's base still exists when the delta is written (another process may
have deleted it); :func:`needed_versions` tells ``prune`` what a kept version
depends on.
"""

from __future__ import annotations

import struct
import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import ormsgpack

from langgraph_durable.checkpointers._errors import InvalidConfigError

__all__ = [
    "DELTA_TYPE",
    "BrokenChainError",
    "ChainCache",
    "DeltaPolicy",
    "Link",
    "Stored",
    "WriteCache",
    "WriteRef",
    "decode_value",
    "delta_base",
    "delta_writes",
    "encode_value",
    "needed_versions",
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


class BrokenChainError(ValueError):
    """A delta's chain cannot be followed to a snapshot (a row is missing or malformed).

    Backends translate this into :class:`~langgraph_durable.checkpointers.CorruptCheckpointError`
    with the thread, namespace, checkpoint and channel of the read.
    """


@dataclass(frozen=True, slots=True)
class DeltaPolicy:
    """When to store a growing value as a delta and when to write a full snapshot.

    Pass one to a saver as ``deltas=DeltaPolicy(...)`` to tune it; ``deltas=True``
    (the default) uses ``DeltaPolicy()``, ``deltas=False`` stores every value
    whole (:meth:`off`). Values already stored as deltas stay readable whatever
    the policy of the saver that reads them.

    A delta is written while the bytes stored as deltas since the last
    snapshot, this one included, stay within ``ratio`` times the snapshot's
    size. With ``ratio=1`` snapshots at least double in size from one to the
    next, so all snapshots of a chain together weigh less than twice the
    newest value and the deltas hold each item once: storage stays linear.
    A fixed interval (a snapshot every N versions) would not: its snapshots
    alone grow with the square of the length.

    Attributes:
        ratio: Deltas since the last snapshot may weigh up to ``ratio`` times
            the snapshot. Larger saves space and lengthens the chains a read
            walks (up to ``ratio / (1 + ratio)`` of the versions since the
            snapshot).
        row_cost: Bytes a stored row costs beyond its payload (keys, index
            entries); charged to every row so tiny deltas cannot make chains
            arbitrarily long.
        max_depth: Optional cap on the number of deltas between a version and
            its snapshot (bounds a read's walk at the price of more snapshots).
        min_size: Values whose serialized size is below this are always stored
            whole: a delta would save little and add a row to every read.
    """

    ratio: float = 1.0
    row_cost: int = 64
    max_depth: int | None = None
    min_size: int = 256

    def __post_init__(self) -> None:
        checks = (
            ("ratio", self.ratio, isinstance(self.ratio, (int, float)) and self.ratio > 0),
            ("row_cost", self.row_cost, isinstance(self.row_cost, int) and self.row_cost >= 0),
            (
                "max_depth",
                self.max_depth,
                self.max_depth is None or (isinstance(self.max_depth, int) and self.max_depth >= 0),
            ),
            ("min_size", self.min_size, isinstance(self.min_size, int) and self.min_size >= 0),
        )
        for name, value, ok in checks:
            if not ok or isinstance(value, bool):
                raise InvalidConfigError(
                    field=f"deltas.{name}",
                    reason=f"must be a non-negative number (ratio: positive), got {value!r}",
                )

    @classmethod
    def off(cls) -> DeltaPolicy:
        """The policy of ``deltas=False``: every value is stored whole."""
        return cls(max_depth=0)

    @property
    def enabled(self) -> bool:
        """Whether this policy ever writes a delta."""
        return self.max_depth != 0


DEFAULT_POLICY = DeltaPolicy()


def resolve_policy(deltas: bool | DeltaPolicy) -> DeltaPolicy:
    """The policy a saver's ``deltas=`` option means (raises on anything else).

    Args:
        deltas: ``True`` for :class:`DeltaPolicy` defaults, ``False`` to store
            every value whole, or a :class:`DeltaPolicy`.

    Raises:
        InvalidConfigError: ``deltas`` is neither a bool nor a ``DeltaPolicy``.
    """
    if deltas is True:
        return DEFAULT_POLICY
    if deltas is False:
        return DeltaPolicy.off()
    if isinstance(deltas, DeltaPolicy):
        return deltas
    raise InvalidConfigError(
        field="deltas", reason=f"expected True, False or a DeltaPolicy, got {deltas!r}"
    )


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
    body_len = len(data) - h
    # The checksum of the whole body lets a read detect a chain whose rows were
    # rewritten in place after this delta was written (instead of returning a
    # mix of old and new bytes).
    root = prev.root or prev.version
    crc = zlib.crc32(memoryview(data)[h:])
    writes = list(writes)
    covered = _segments(suffix, writes) if writes_of is not None else None
    refs: tuple[tuple[str, int, bytes], ...] = ()
    if covered is not None:
        segs, tail = covered
        by_key = {(w.task_id, w.idx): w.blob for w in writes}
        refs = tuple((t, i, by_key[(t, i)]) for t, i in (g for g in segs if isinstance(g, list)))
    else:
        segs, tail = ([len(suffix)] if suffix else []), suffix
    if compact:
        # base and writes_of live beside the blob (the backend's columns)
        meta = ormsgpack.packb(
            [
                header,
                prev.depth + 1,
                body_len,
                crc,
                [[_pack_task(g[0]), g[1]] if isinstance(g, list) else g for g in segs],
            ]
        )
        blob = _PREFIX.pack(_FORMAT_COMPACT, len(meta)) + meta + tail
    elif refs:
        meta = ormsgpack.packb(
            [prev.version, header, prev.depth + 1, body_len, crc, writes_of, segs]
        )
        blob = _PREFIX.pack(_FORMAT_REFS, len(meta)) + meta + tail
    else:
        meta = ormsgpack.packb([prev.version, header, prev.depth + 1, body_len, crc, root])
        blob = _PREFIX.pack(_FORMAT, len(meta)) + meta + suffix
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


def decode_value(
    version: str,
    rows: Mapping[str, tuple[str, bytes | None]],
    policy: DeltaPolicy = DEFAULT_POLICY,
    writes: WriteRows | None = None,
) -> tuple[str, bytes, Link | None]:
    """Rebuild the serialized value of ``version`` from its stored chain.

    One read of :class:`langgraph_durable.checkpointers._delta_read.ChainReader` (use a reader
    to rebuild several versions of a channel sharing the work).

    Args:
        version: The version to read.
        rows: Stored ``(type, blob)`` by version for this thread, namespace and
            channel; must hold ``version`` and, if it is a delta, every version
            back to its snapshot (more is fine).
        policy: The saver's policy (for the returned chain state's costs).
        writes: The pending writes the chain's deltas refer to (see
            :func:`delta_writes`); more is fine.

    Returns:
        ``(type, data, link)``: what ``serde.loads_typed`` takes, byte for byte
        what a full write of the value would have stored, and the chain state
        to put in the cache.

    Raises:
        BrokenChainError: A version of the chain is missing or malformed.
    """
    # imported here: the reader builds on this module's format
    from langgraph_durable.checkpointers._delta_read import ChainReader

    return ChainReader(rows, writes, policy).read(version)


def needed_versions(targets: Iterable[str], bases: Mapping[str, str | None]) -> set[str]:
    """Every version the ``targets`` need to be read: themselves and their chains.

    Args:
        targets: Versions that must stay readable (those kept checkpoints use).
        bases: For each stored version, the version it extends (None for a
            full value); see :func:`delta_base`.

    Returns:
        The targets plus all their bases, transitively. Versions missing from
        ``bases`` are included but not followed.
    """
    needed: set[str] = set()
    stack = list(targets)
    while stack:
        v = stack.pop()
        if v in needed:
            continue
        needed.add(v)
        base = bases.get(v)
        if base is not None:
            stack.append(base)
    return needed


class ChainCache:
    """The newest known chain state per (thread, namespace, channel), bounded in bytes.

    A saver keeps one and shares it between its sync and async calls. Entries
    only ever let a ``put`` write a delta instead of a full value; losing one
    (eviction, another process writing the thread) costs a snapshot, never a
    wrong read. Thread-safe.

    Args:
        max_bytes: Evict least recently used entries beyond this many body bytes.
    """

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str, str], Link] = OrderedDict()
        # channels cached per (thread, namespace), for reads that skip known chains
        self._channels: dict[tuple[str, str], set[str]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def _drop(self, key: tuple[str, str, str]) -> None:
        chans = self._channels.get(key[:2])
        if chans is not None:
            chans.discard(key[2])
            if not chans:
                del self._channels[key[:2]]

    def links(self, thread_id: str, checkpoint_ns: str) -> list[tuple[str, Link]]:
        """``(channel, link)`` of every channel of a thread and namespace cached."""
        with self._lock:
            chans = self._channels.get((thread_id, checkpoint_ns))
            if not chans:
                return []
            return [(ch, self._entries[(thread_id, checkpoint_ns, ch)]) for ch in chans]

    def get(self, thread_id: str, checkpoint_ns: str, channel: str) -> Link | None:
        """The chain state to extend for this channel, if known."""
        key = (thread_id, checkpoint_ns, channel)
        with self._lock:
            link = self._entries.get(key)
            if link is not None:
                self._entries.move_to_end(key)
            return link

    def put(self, thread_id: str, checkpoint_ns: str, channel: str, link: Link | None) -> None:
        """Remember ``link`` (call after the write that stored it committed)."""
        key = (thread_id, checkpoint_ns, channel)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
                self._drop(key)
            if link is None or len(link.body) > self.max_bytes:
                return
            self._entries[key] = link
            self._channels.setdefault(key[:2], set()).add(channel)
            self._bytes += len(link.body)
            while self._bytes > self.max_bytes:
                gone, evicted = self._entries.popitem(last=False)
                self._bytes -= len(evicted.body)
                self._drop(gone)

    def forget(self, thread_id: str, checkpoint_ns: str | None = None) -> None:
        """Drop a thread's entries (all namespaces if ``checkpoint_ns`` is None)."""
        with self._lock:
            for key in [
                k
                for k in self._entries
                if k[0] == thread_id and (checkpoint_ns is None or k[1] == checkpoint_ns)
            ]:
                self._bytes -= len(self._entries.pop(key).body)
                self._drop(key)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._channels.clear()
            self._bytes = 0


class WriteCache:
    """Recent pending writes per (thread, namespace, checkpoint), for ``put`` to refer to.

    ``put_writes`` stores a step's new items before ``put`` stores the value
    they extend; the saver remembers the writes here so that the delta can
    name them instead of copying their bytes. Losing an entry costs a copy,
    never correctness: the backend checks the referenced bytes when it
    stores the delta. Bounded in bytes, least recently used out. Thread-safe.

    Args:
        max_bytes: Evict least recently used checkpoints beyond this many bytes.
    """

    def __init__(self, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str, str], list[tuple[str, WriteRef]]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def add(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        writes: Iterable[tuple[str, WriteRef]],
    ) -> None:
        """Remember ``(channel, write)`` pairs stored for a checkpoint (list values only)."""
        kept = [(ch, w) for ch, w in writes if w.idx >= 0 and write_body(w.type, w.blob)]
        if not kept:
            return
        key = (thread_id, checkpoint_ns, checkpoint_id)
        with self._lock:
            entry = self._entries.setdefault(key, [])
            have = {(w.task_id, w.idx) for _, w in entry}
            for ch, w in kept:
                if (w.task_id, w.idx) not in have:  # stores keep the first write
                    entry.append((ch, w))
                    self._bytes += len(w.blob)
            self._entries.move_to_end(key)
            while self._bytes > self.max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= sum(len(w.blob) for _, w in evicted)

    def get(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None, channel: str
    ) -> list[WriteRef]:
        """The remembered writes of a checkpoint to ``channel``."""
        if not checkpoint_id:
            return []
        with self._lock:
            entry = self._entries.get((thread_id, checkpoint_ns, checkpoint_id))
            return [w for ch, w in entry or () if ch == channel]

    def forget(self, thread_id: str) -> None:
        """Drop a thread's entries."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == thread_id]:
                self._bytes -= sum(len(w.blob) for _, w in self._entries.pop(key))
