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

from langgraph_durable.checkpointers._delta import (
    _FORMAT_COMPACT,
    DELTA_TYPE,
    Link,
    WriteRows,
    snapshot_link,
)
from langgraph_durable.checkpointers._delta_policy import (
    DEFAULT_POLICY,
    BrokenChainError,
    DeltaPolicy,
)
from langgraph_durable.checkpointers._delta_walk import (
    _Known,
    _meta,
    _Slow,
    checked_walk,
    compact_chain,
    compact_metas,
    compact_parts,
)
from langgraph_durable.checkpointers._otel_calls import note_chain

__all__ = [
    "ChainReader",
    "decode_value",
    "delta_target",
    "needed_versions",
    "rebuilds_held",
]

_NO_WRITES: WriteRows = {}


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
        row_cost = self._policy.row_cost
        chain, base = compact_chain(self._rows, self._known, row_cost, version)
        metas, tails = compact_metas(chain)
        rparts, visited, costs = compact_parts(chain, metas, tails, self._writes, row_cost)
        # each delta's parts came newest delta first and its parts backwards:
        # one reverse puts every part in order
        rparts.reverse()
        data = self._finish(version, base, visited, rparts, costs)
        if data is None:
            raise _Slow
        return data

    def _walk_checked(self, version: str) -> tuple[str, bytes, Link | None]:
        base, visited, parts, costs = checked_walk(
            self._rows, self._known, self._writes, self._policy.row_cost, version
        )
        out = self._finish(version, base, visited, parts, costs)
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
