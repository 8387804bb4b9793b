"""Reading stored delta chains back (I/O-free, backend-agnostic; see :mod:`._delta`).

A backend fetches the rows of a channel's chain (and the pending writes its
deltas refer to) and hands them to a :class:`ChainReader`, which rebuilds the
serialized value of any version among them. One reader serves every version a
read needs: the checkpoints of a history share their chains, so the reader
walks a chain once and rebuilds the older versions on it as prefixes of the
newer one (each checked against its own CRC), instead of walking the chain
again per checkpoint.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from typing import Any

import ormsgpack

from langgraph_durable.checkpointers._delta import (
    _FORMAT,
    _FORMAT_COMPACT,
    _FORMAT_REFS,
    _MSGPACK_TYPES,
    _PREFIX,
    DELTA_TYPE,
    Link,
    WriteRows,
    _header_len,
    snapshot_link,
    unpack_task,
    write_body,
)
from langgraph_durable.checkpointers._delta_policy import (
    DEFAULT_POLICY,
    BrokenChainError,
    DeltaPolicy,
)
from langgraph_durable.checkpointers._otel_saver import note_chain

__all__ = [
    "ChainReader",
    "decode_value",
    "delta_target",
    "needed_versions",
    "rebuilds_held",
]

_NO_WRITES: WriteRows = {}


class _Slow(Exception):
    """The compact walk met something it leaves to the checked walk."""


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


class _Known:
    """A version whose whole body is known, as the start of another's rebuild."""

    __slots__ = ("body", "costs", "depth", "header", "root", "snapshot_bytes", "type")

    def __init__(
        self,
        type_: str,
        header: bytes,
        body: bytes,
        depth: int,
        costs: int,
        snapshot_bytes: int,
        root: str,
    ) -> None:
        self.type = type_
        self.header = header
        self.body = body
        self.depth = depth
        self.costs = costs
        self.snapshot_bytes = snapshot_bytes
        self.root = root


_META_LEN = {_FORMAT: 6, _FORMAT_REFS: 7, _FORMAT_COMPACT: 5}


def _meta(blob: bytes, version: str) -> tuple[list[Any], memoryview, int]:
    """A delta row's meta list, its inline bytes, and its format."""
    try:
        fmt, n = _PREFIX.unpack_from(blob)
        if fmt not in _META_LEN:
            raise BrokenChainError(f"unknown delta format {fmt} in {version!r}")
        view = memoryview(blob)
        meta = ormsgpack.unpackb(view[_PREFIX.size : _PREFIX.size + n])
        if not isinstance(meta, list) or len(meta) < _META_LEN[fmt]:
            raise BrokenChainError(f"malformed delta {version!r}")
        return meta, view[_PREFIX.size + n :], fmt
    except BrokenChainError:
        raise
    except Exception as exc:
        raise BrokenChainError(f"malformed delta {version!r}: {exc}") from exc


def delta_target(blob: bytes, version: str) -> tuple[bytes, int, int]:
    """``(header, body length, crc32 of the body)`` of the value a delta row rebuilds.

    A reader that already holds a version whole (the value it just wrote)
    compares it with these instead of walking the chain again.

    Raises:
        BrokenChainError: The delta is malformed.
    """
    meta, _tail, fmt = _meta(blob, version)
    if fmt == _FORMAT_COMPACT:
        return meta[0], meta[2], meta[3]
    return meta[1], meta[3], meta[4]


def rebuilds_held(blob: bytes, version: str, held: Link) -> bool:
    """Whether a delta row rebuilds exactly the bytes of ``held`` (its header, length, CRC).

    Raises:
        BrokenChainError: The delta is malformed.
    """
    header, body_len, crc = delta_target(blob, version)
    return header == held.header and body_len == len(held.body) and crc == zlib.crc32(held.body)


class ChainReader:
    """Rebuilds versions of one channel from its stored rows, sharing work between reads.

    Args:
        rows: Stored ``(type, blob)`` by version for one thread, namespace and
            channel: each version to read and its chain back to a snapshot
            (rows of other branches are ignored). Rows of compact deltas
            (format 3) are ``(type, blob, base version, writes_of)``: those
            two are stored beside the blob.
        writes: The pending writes the deltas refer to, by ``(checkpoint id,
            task id, idx)`` (see :func:`~langgraph_durable.checkpointers._delta.delta_writes`).
        policy: The saver's policy (for the costs in the returned chain state).
    """

    def __init__(
        self,
        rows: Mapping[str, tuple[Any, ...]],
        writes: WriteRows | None = None,
        policy: DeltaPolicy = DEFAULT_POLICY,
    ) -> None:
        self._rows = rows
        note_chain(len(rows))
        self._writes = writes if writes is not None else _NO_WRITES
        self._policy = policy
        # versions rebuilt whole, and versions on their chains: (source, header,
        # body length, crc), so an ancestor is a checked slice of the source
        self._known: dict[str, _Known] = {}
        self._prefixes: dict[str, tuple[str, bytes, int, int]] = {}
        # chains walked but not indexed yet (most reads never need the index)
        self._walked: list[tuple[str, list[tuple[str, bytes, int, int]]]] = []

    def read(self, version: str) -> tuple[str, bytes, Link | None]:
        """``(type, data, link)`` of ``version``: exactly the bytes a whole write stored.

        ``link`` is the chain state for the saver's cache (None for a version
        rebuilt as a prefix of another: the cache wants the newest anyway).

        Raises:
            BrokenChainError: A version of the chain is missing or malformed,
                or the rebuilt bytes do not match the checksum written with them.
        """
        try:
            return self._read(version)
        except BrokenChainError:
            raise
        except Exception as exc:  # a malformed row the checks above did not name
            raise BrokenChainError(f"malformed chain at {version!r}: {exc!r}") from exc

    def _read(self, version: str) -> tuple[str, bytes, Link | None]:
        row = self._rows.get(version)
        if row is None:
            raise BrokenChainError(f"version {version!r} is missing")
        if row[0] != DELTA_TYPE:
            if row[1] is None:
                raise BrokenChainError(f"snapshot {version!r} has no bytes")
            return row[0], row[1], snapshot_link(version, row[0], row[1], self._policy)
        known = self._known.get(version)
        if known is not None:
            return known.type, known.header + known.body, None
        if self._walked:
            for source, visited in self._walked:
                for v, h, n, c in visited[1:]:
                    self._prefixes.setdefault(v, (source, h, n, c))
            self._walked.clear()
        pre = self._prefixes.get(version)
        if pre is not None:
            source, header, body_len, crc = pre
            src = self._known[source]
            body = src.body[:body_len]
            if len(body) == body_len and zlib.crc32(body) == crc:
                return src.type, header + body, None
            # not a prefix after all (a row of another branch): walk its own chain
        return self._walk(version)

    def _walk(self, version: str) -> tuple[str, bytes, Link | None]:
        try:
            return self._walk_compact(version)
        except _Slow:
            # anything but a well-formed chain of compact deltas: the checked
            # walk, which names the row at fault
            return self._walk_checked(version)

    def _walk_compact(self, version: str) -> tuple[str, bytes, Link | None]:
        """The walk of a chain of compact deltas, their metas decoded in one call.

        Raises :class:`_Slow` at the first thing it does not expect (another
        format, a missing row or write, a mismatch): the checked walk decides.
        """
        rows, known_, row_cost = self._rows, self._known, self._policy.row_cost
        chain: list[tuple[str, bytes, Any]] = []  # (version, blob, writes_of), newest first
        cur: Any = version
        base: _Known | None = None
        for _ in range(len(rows) + 1):
            row = rows.get(cur)
            if row is None:
                raise _Slow
            if row[0] != DELTA_TYPE:
                blob = row[1]
                hl = _header_len(blob) if blob is not None else None
                if hl is None or row[0] not in _MSGPACK_TYPES:
                    raise _Slow
                base = _Known(row[0], blob[:hl], blob[hl:], 0, 0, len(blob) + row_cost, cur)
                break
            if cur != version and cur in known_:
                base = known_[cur]
                break
            blob = row[1]
            if blob is None or len(row) < 4 or not blob or blob[0] != _FORMAT_COMPACT:
                raise _Slow
            chain.append((cur, blob, row[3]))
            cur = row[2]
        else:
            raise _Slow
        if base is None:
            raise _Slow
        # concatenated msgpack objects behind an array header are one array
        metas_in: list[bytes] = [_array_header(len(chain))]
        tails: list[memoryview] = []
        for _, blob, _ in chain:
            end = 5 + int.from_bytes(blob[1:5], "big")
            metas_in.append(blob[5:end])
            tails.append(memoryview(blob)[end:])
        try:
            metas = ormsgpack.unpackb(b"".join(metas_in))
        except Exception as exc:
            raise _Slow from exc
        if type(metas) is not list or len(metas) != len(chain):
            raise _Slow
        writes = self._writes
        # each delta's parts, newest delta first and its parts backwards: one
        # reverse at the end puts every part in order
        rparts: list[bytes | memoryview] = []
        visited: list[tuple[str, bytes, int, int]] = []
        costs = 0
        try:
            for (cur, blob, writes_of), meta, tail in zip(chain, metas, tails, strict=True):
                header, _depth, body_len, crc, segs = meta
                if type(header) is not bytes or type(body_len) is not int or type(crc) is not int:
                    raise _Slow
                visited.append((cur, header, body_len, crc))
                off = len(tail)
                refs = 0
                for g in reversed(segs):
                    if type(g) is int:
                        if g < 0 or g > off:
                            raise _Slow
                        rparts.append(tail[off - g : off])
                        off -= g
                        continue
                    task = g[0]
                    if type(task) is bytes and len(task) == 16:
                        h = task.hex()  # unpack_task, inline (once per write of the chain)
                        task = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
                    w = writes.get((writes_of, task, g[1]))
                    if w is None or w[0] not in _MSGPACK_TYPES or not w[1]:
                        raise _Slow
                    wb = w[1]
                    b0 = wb[0]
                    # a list write's items: its array header cut off
                    if 0x90 <= b0 <= 0x9F:
                        rparts.append(memoryview(wb)[1:])
                    elif (b0 == 0xDC and len(wb) >= 3) or (b0 == 0xDD and len(wb) >= 5):
                        rparts.append(memoryview(wb)[3 if b0 == 0xDC else 5 :])
                    else:
                        raise _Slow
                    refs += 1
                if off:
                    raise _Slow  # inline bytes the segments do not account for
                costs += len(blob) + row_cost * (1 + refs)
        except _Slow:
            raise
        except Exception as exc:
            raise _Slow from exc
        rparts.reverse()
        data = self._finish(version, base, visited, rparts, costs)
        if data is None:
            raise _Slow
        return data

    def _walk_checked(self, version: str) -> tuple[str, bytes, Link | None]:
        rows, writes, row_cost = self._rows, self._writes, self._policy.row_cost
        chunks: list[list[bytes | memoryview]] = []  # each delta's suffix parts, newest first
        visited: list[tuple[str, bytes, int, int]] = []
        costs = 0
        cur = version
        base: _Known | None = None
        for _ in range(len(rows) + 1):
            row = rows.get(cur)
            if row is None:
                raise BrokenChainError(f"version {cur!r} of the chain of {version!r} is missing")
            type_, blob = row[0], row[1]
            if type_ != DELTA_TYPE:
                if blob is None:
                    raise BrokenChainError(f"snapshot {cur!r} has no bytes")
                hl = _header_len(blob)
                if hl is None or type_ not in _MSGPACK_TYPES:
                    raise BrokenChainError(f"snapshot {cur!r} of {version!r} is not a container")
                base = _Known(type_, blob[:hl], blob[hl:], 0, 0, len(blob) + row_cost, cur)
                break
            if cur != version and cur in self._known:
                base = self._known[cur]
                break
            if blob is None:
                raise BrokenChainError(f"delta {cur!r} has no bytes")
            meta, tail, fmt = _meta(blob, cur)
            if fmt == _FORMAT_COMPACT:
                header, body_len, crc, segs = meta[0], meta[2], meta[3], meta[4]
                base_version, writes_of = (row[2], row[3]) if len(row) >= 4 else (None, None)
                if not isinstance(base_version, str):
                    raise BrokenChainError(f"delta {cur!r} has no base version beside it")
            else:
                header, body_len, crc = meta[1], meta[3], meta[4]
                base_version = meta[0]
                segs = meta[6] if fmt == _FORMAT_REFS else None
                writes_of = meta[5] if fmt == _FORMAT_REFS else None
            visited.append((cur, header, body_len, crc))
            if segs is None:
                chunks.append([tail])
                costs += len(blob) + row_cost
            else:
                parts: list[bytes | memoryview] = []
                off = refs = 0
                for g in segs:
                    if isinstance(g, int):
                        parts.append(tail[off : off + g])
                        off += g
                        continue
                    task_id = unpack_task(g[0]) if fmt == _FORMAT_COMPACT else g[0]
                    # ids of another type (a damaged row) match no write: a broken chain
                    w = (
                        writes.get((writes_of, task_id, g[1]))
                        if isinstance(writes_of, str) and isinstance(task_id, str)
                        else None
                    )
                    items = write_body(*w) if w is not None else None
                    if items is None:
                        raise BrokenChainError(
                            f"the pending write ({writes_of!r}, {task_id!r}, {g[1]!r}) that "
                            f"delta {cur!r} refers to is missing"
                        )
                    parts.append(items)
                    refs += 1
                chunks.append(parts)
                costs += len(blob) + row_cost * (1 + refs)
            cur = base_version
        else:
            raise BrokenChainError(f"the chain of {version!r} loops")
        if base is None:  # pragma: no cover - the loop either breaks or raises
            raise BrokenChainError(f"the chain of {version!r} has no snapshot")
        parts_in_order = [p for parts in reversed(chunks) for p in parts]
        out = self._finish(version, base, visited, parts_in_order, costs)
        if out is None:
            raise BrokenChainError(
                f"the chain of {version!r} does not add up (a row was rewritten)"
            )
        return out

    def _finish(
        self,
        version: str,
        base: _Known,
        visited: list[tuple[str, bytes, int, int]],
        parts: list[bytes | memoryview],
        costs: int,
    ) -> tuple[str, bytes, Link | None] | None:
        """The rebuilt value from its base and its deltas' parts (oldest first); None
        if it does not match its length and CRC."""
        if not visited:
            data = base.header + base.body
            link = snapshot_link(version, base.type, data, self._policy)
            return base.type, data, link
        _, header, body_len, crc = visited[0]
        # the whole value in one copy; its body checked in place
        data = b"".join([header, base.body, *parts])
        hl = len(header)
        if len(data) - hl != body_len or zlib.crc32(memoryview(data)[hl:]) != crc:
            return None
        body = data[hl:]
        depth = base.depth + len(visited)
        known = _Known(
            base.type, header, body, depth, base.costs + costs, base.snapshot_bytes, base.root
        )
        self._known[version] = known
        self._walked.append((version, visited))
        link = Link(
            version,
            base.type,
            header,
            body,
            depth,
            known.costs,
            known.snapshot_bytes,
            base.root,
        )
        return base.type, data, link


def decode_value(
    version: str,
    rows: Mapping[str, tuple[str, bytes | None]],
    policy: DeltaPolicy = DEFAULT_POLICY,
    writes: WriteRows | None = None,
) -> tuple[str, bytes, Link | None]:
    """Rebuild the serialized value of ``version`` from its stored chain.

    One read of a :class:`ChainReader` (use a reader to rebuild several
    versions of a channel sharing the work).

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
