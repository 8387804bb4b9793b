"""The walks of a delta chain back to its snapshot (I/O-free; see :mod:`._delta_read`).

Both walks go from the version asked for back to a snapshot (or a version the
reader already rebuilt) and collect what each delta adds. The compact walk
takes the common case fast (a chain of compact deltas, their metas decoded in
one call) and gives up with :class:`_Slow` at anything unexpected; the checked
walk then reads any format and names the row at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ormsgpack

from langgraph_durable.checkpointers._delta import (
    _FORMAT,
    _FORMAT_COMPACT,
    _FORMAT_REFS,
    _MSGPACK_TYPES,
    _PREFIX,
    DELTA_TYPE,
    WriteRows,
    _header_len,
    unpack_task,
    write_body,
)
from langgraph_durable.checkpointers._delta_policy import BrokenChainError

__all__ = ["checked_walk", "compact_chain", "compact_metas", "compact_parts"]

Rows = Mapping[str, tuple[Any, ...]]
# (version, header, body length, crc) of each delta walked, newest first
Visited = list[tuple[str, bytes, int, int]]


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


def compact_chain(
    rows: Rows, known: Mapping[str, _Known], row_cost: int, version: str
) -> tuple[list[tuple[str, bytes, Any]], _Known]:
    """The compact deltas from ``version`` back to its base, and that base.

    Returns ``([(version, blob, writes_of)], base)``, newest delta first; the
    base is a snapshot row or a version already rebuilt. Raises :class:`_Slow`
    at a missing row, a loop or a delta of another format.
    """
    chain: list[tuple[str, bytes, Any]] = []
    cur: Any = version
    for _ in range(len(rows) + 1):
        row = rows.get(cur)
        if row is None:
            raise _Slow
        if row[0] != DELTA_TYPE:
            blob = row[1]
            hl = _header_len(blob) if blob is not None else None
            if hl is None or row[0] not in _MSGPACK_TYPES:
                raise _Slow
            return chain, _Known(row[0], blob[:hl], blob[hl:], 0, 0, len(blob) + row_cost, cur)
        if cur != version and cur in known:
            return chain, known[cur]
        blob = row[1]
        if blob is None or len(row) < 4 or not blob or blob[0] != _FORMAT_COMPACT:
            raise _Slow
        chain.append((cur, blob, row[3]))
        cur = row[2]
    raise _Slow


def compact_metas(chain: list[tuple[str, bytes, Any]]) -> tuple[list[Any], list[memoryview]]:
    """The metas of the chain's deltas, decoded in one call, and their inline bytes."""
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
    return metas, tails


def compact_parts(
    chain: list[tuple[str, bytes, Any]],
    metas: list[Any],
    tails: list[memoryview],
    writes: WriteRows,
    row_cost: int,
) -> tuple[list[bytes | memoryview], Visited, int]:
    """What the chain's deltas add, newest delta first and each delta's parts backwards.

    Returns ``(reversed parts, visited, costs)``: one reverse of the parts puts
    them in order. Inline bytes are sliced, items of a referenced list write
    are its bytes without their array header. Raises :class:`_Slow` at
    anything that does not add up.
    """
    rparts: list[bytes | memoryview] = []
    visited: Visited = []
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
    return rparts, visited, costs


def checked_walk(
    rows: Rows, known: Mapping[str, _Known], writes: WriteRows, row_cost: int, version: str
) -> tuple[_Known, Visited, list[bytes | memoryview], int]:
    """The walk of a chain of deltas of any format, checking every row.

    Returns ``(base, visited, parts in order, costs)``. The loop is one piece
    on purpose: it runs once per delta of every chain a read rebuilds.

    Raises:
        BrokenChainError: Naming the row at fault: missing, malformed, looping,
            or referring to a pending write that is not there.
    """
    chunks: list[list[bytes | memoryview]] = []  # each delta's suffix parts, newest first
    visited: Visited = []
    costs = 0
    cur = version
    for _ in range(len(rows) + 1):
        row = rows.get(cur)
        if row is None:
            raise BrokenChainError(f"version {cur!r} of the chain of {version!r} is missing")
        type_, blob = row[0], row[1]
        if type_ != DELTA_TYPE:
            base = _snapshot(type_, blob, cur, version, row_cost)
            break
        if cur != version and cur in known:
            base = known[cur]
            break
        if blob is None:
            raise BrokenChainError(f"delta {cur!r} has no bytes")
        meta, tail, fmt = _meta(blob, cur)
        if fmt == _FORMAT_COMPACT:
            # the base version and writes_of are stored beside the blob
            header, body_len, crc, segs = meta[0], meta[2], meta[3], meta[4]
            base_version, writes_of = (row[2], row[3]) if len(row) >= 4 else (None, None)
            if not isinstance(base_version, str):
                raise BrokenChainError(f"delta {cur!r} has no base version beside it")
        else:
            header, body_len, crc, base_version = meta[1], meta[3], meta[4], meta[0]
            segs, writes_of = (meta[6], meta[5]) if fmt == _FORMAT_REFS else (None, None)
        visited.append((cur, header, body_len, crc))
        # a delta without segments (format 1) is its inline bytes, no refs
        parts: list[bytes | memoryview] = [tail] if segs is None else []
        off = refs = 0
        for g in () if segs is None else segs:
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
                raise _missing_write(writes_of, task_id, g[1], cur)
            parts.append(items)
            refs += 1
        chunks.append(parts)
        costs += len(blob) + row_cost * (1 + refs)
        cur = base_version
    else:
        raise BrokenChainError(f"the chain of {version!r} loops")
    return base, visited, [p for parts in reversed(chunks) for p in parts], costs


def _snapshot(type_: str, blob: bytes | None, cur: str, version: str, row_cost: int) -> _Known:
    """The snapshot a chain starts from, as the base of its rebuild."""
    if blob is None:
        raise BrokenChainError(f"snapshot {cur!r} has no bytes")
    hl = _header_len(blob)
    if hl is None or type_ not in _MSGPACK_TYPES:
        raise BrokenChainError(f"snapshot {cur!r} of {version!r} is not a container")
    return _Known(type_, blob[:hl], blob[hl:], 0, 0, len(blob) + row_cost, cur)


def _missing_write(writes_of: Any, task_id: Any, idx: Any, cur: str) -> BrokenChainError:
    return BrokenChainError(
        f"the pending write ({writes_of!r}, {task_id!r}, {idx!r}) that "
        f"delta {cur!r} refers to is missing"
    )
