"""Encoding of everything the Redis saver stores, and decoding back (no I/O).

One place per format: :meth:`Codec.encode_value` / :meth:`Codec.decode_value`
for one channel value (blobs and pending writes alike) and, here too, a
growing value as a delta of the version it extends. The checkpoint record and
its refs are in :mod:`._record_format`, pending writes and waits in
:mod:`._write_format`, the metadata index members in :mod:`._index_format`;
their functions are :class:`Codec` methods, so a saver holds one codec.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    DeltaPolicy,
    Link,
    WriteRows,
    encode_value,
    snapshot_link,
)
from langgraph_durable.checkpointers._delta_caches import ChainCache, WriteCache
from langgraph_durable.checkpointers._delta_read import ChainReader, rebuilds_held
from langgraph_durable.checkpointers._readable import mark_readable
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.checkpointers.redis import _record_format, _write_format
from langgraph_durable.checkpointers.redis._delta_lua import WREF
from langgraph_durable.checkpointers.redis._index_format import SEP, index_prefix, is_indexed
from langgraph_durable.checkpointers.redis._record_format import (
    StaleKnown,
    chain_map,
    share_chains,
)
from langgraph_durable.migrations import is_migrated_version

__all__ = [
    "SEP",
    "Codec",
    "StaleKnown",
    "chain_map",
    "index_prefix",
    "is_indexed",
    "now_utc",
    "share_chains",
]


class _ReplyReaders:
    """The chain readers of one reply's chain mapping (held, so ``is`` is exact)."""

    __slots__ = ("chain", "readers", "writes")

    def __init__(self, chain: Mapping[str, bytes], writes: WriteRows) -> None:
        self.chain = chain
        self.writes = writes
        self.readers: dict[str, tuple[dict[str, Any], ChainReader]] = {}


class Codec:
    """Serialization of one saver (its ``serde``), shared by sync and async."""

    def __init__(
        self,
        serde: SerializerProtocol,
        chains: ChainCache | None = None,
        policy: DeltaPolicy | None = None,
        writes: WriteCache | None = None,
    ) -> None:
        self.serde = serde
        # what a put may extend, per (thread, namespace, channel)
        self.chains = chains if chains is not None else ChainCache()
        self.policy = policy if policy is not None else DeltaPolicy()
        # and the pending writes its deltas may refer to instead of copying them
        self.writes = writes if writes is not None else WriteCache()
        # the chain readers of the last reply read (a history's checkpoints share
        # one chain mapping, see share_chains): each chain is rebuilt once per
        # reply, not once per checkpoint
        self._last = _ReplyReaders({}, {})

    # -- one channel value --------------------------------------------------
    def encode_value(self, value: Any, channel: str | None = None) -> bytes:
        """Bytes of one channel value or pending-write value (of ``channel``, for errors)."""
        type_, data = dumps_exact(self.serde, value, field="channel value", channel=channel)
        return type_.encode() + b"\x00" + data

    def decode_value(self, raw: bytes) -> Any:
        """Inverse of :meth:`encode_value` (raises on corrupt data)."""
        type_, sep, data = raw.partition(b"\x00")
        if not sep:
            raise ValueError("missing type tag")
        return loads_exact(self.serde, type_.decode(), data)

    DELTA = b"delta\x00"
    """A delta of layout steps 1-4: ``delta\\0<base>\\0<blob>`` (read, no longer written)."""
    DELTA2 = b"delta2\x00"
    """A delta since layout step 5: ``delta2\\0<blob>`` (see ``_delta_lua``)."""

    @classmethod
    def is_delta(cls, raw: bytes | None) -> bool:
        """Whether stored value bytes are a delta (either form)."""
        return raw is not None and (raw.startswith(cls.DELTA) or raw.startswith(cls.DELTA2))

    # -- growing channel values --------------------------------------
    def encode_channel_value(
        self,
        thread_id: str,
        ns: str,
        channel: str,
        version: str,
        value: Any,
        *,
        deltas: bool,
        writes_of: str | None = None,
        checks: list[Any] | None = None,
    ) -> tuple[bytes, Link | None]:
        """Stored bytes of a channel value: whole, or ``delta2\\0<delta blob>``.

        ``writes_of`` is the parent checkpoint: the delta refers to its pending
        writes to the channel (those this saver stored) instead of copying
        their items; ``(member, tail length, tail sha1)`` of each goes to
        ``checks`` for the put script to verify.
        """
        on = deltas and self.policy.enabled
        prev = self.chains.get(thread_id, ns, channel) if on else None
        # bases are older than what extends them; an upgraded value is stored whole
        if prev is not None and (not prev.version < version or is_migrated_version(version)):
            prev = None
        type_, data = dumps_exact(
            self.serde, value, field="channel value", channel=channel, extends=prev
        )
        pending = (
            self.writes.get(thread_id, ns, writes_of, channel)
            if prev is not None and checks is not None
            else []
        )
        stored, link = encode_value(
            prev,
            version,
            type_,
            data,
            self.policy,
            writes=pending,
            writes_of=writes_of if pending else None,
        )
        mark_readable(self.serde, link)
        if stored.type != DELTA_TYPE:
            return type_.encode() + b"\x00" + data, link
        if stored.refs:
            assert checks is not None and stored.writes_of is not None
            types = {(w.task_id, w.idx): w.type for w in pending}
            for task_id, idx, blob in stored.refs:
                tail = types[(task_id, idx)].encode() + b"\x00" + blob
                checks += [
                    SEP.join((ns, stored.writes_of, task_id, str(idx))),
                    len(tail),
                    hashlib.sha1(tail, usedforsecurity=False).hexdigest(),
                ]
        return self.DELTA2 + stored.blob, link

    @classmethod
    def _row(cls, raw: bytes) -> tuple[str, bytes]:
        if raw.startswith(cls.DELTA2):
            return DELTA_TYPE, raw[len(cls.DELTA2) :]
        type_, _, data = raw.partition(b"\x00")
        if type_ == b"delta":
            data = data.partition(b"\x00")[2]
        return type_.decode(), data

    @staticmethod
    def _write_rows(chain: Mapping[str, bytes]) -> WriteRows:
        """The pending writes a reply's deltas refer to, by (checkpoint, task, idx)."""
        out: dict[tuple[str, str, int], tuple[str, bytes | None]] = {}
        for fld, raw in chain.items():
            if fld.startswith(WREF):
                _ns, cid, task_id, idx = fld[len(WREF) :].split(SEP)
                parts = raw.split(b"\x00", 5)
                out[(cid, task_id, int(idx))] = (parts[4].decode(), parts[5])
        return out

    def known_fields(self, thread_id: str, ns: str) -> dict[str, Link]:
        """The blob fields whose versions this saver holds whole.

        A read asks the script not to send their chains: :meth:`decode_channel_value`
        takes the held bytes when the stored delta rebuilds exactly them.
        """
        return {
            self.blob_field(ns, ch, link.version): link
            for ch, link in self.chains.links(thread_id, ns)
        }

    def decode_channel_value(
        self,
        thread_id: str,
        ns: str,
        field: str,
        raw: bytes,
        chain: Mapping[str, bytes],
        known: Mapping[str, Link] | None = None,
    ) -> Any:
        """A channel value from its stored bytes (and, for a delta, its chain's).

        ``known``: the fields whose chains the read did not fetch, with the
        versions held whole; :class:`StaleKnown` if the stored delta does not
        rebuild the held bytes (another writer), so the read is made again.
        """
        channel, version = field[len(ns) + 1 :].rsplit(SEP, 1)
        rows = {version: self._row(raw)}
        held = known.get(field) if known else None
        if held is not None and self.is_delta(raw):
            if not rebuilds_held(rows[version][1], version, held):
                raise StaleKnown(field)
            return loads_exact(self.serde, held.type, held.header + held.body)
        if self.is_delta(raw):
            head = field[: len(field) - len(version)]
            reader_rows, reader = self._reader(chain, head)
            reader_rows.setdefault(version, rows[version])
            type_, data, link = reader.read(version)
            value = loads_exact(self.serde, type_, data, rebuilt=True)
        else:
            type_, data = rows[version]
            link = snapshot_link(version, type_, data, self.policy)
            value = loads_exact(self.serde, type_, data)
        self.remember(thread_id, ns, channel, link)
        return value

    def _reader(self, chain: Mapping[str, bytes], head: str) -> tuple[dict[str, Any], ChainReader]:
        """The rows and reader of one channel's chain in ``chain`` (one per reply).

        A reply's checkpoints share its ``chain`` mapping; the reader rebuilds
        the newest version once and the older ones as checked prefixes of it.
        Rows are one thread's, namespace's and channel's stored rows: a
        version's bytes are the same whichever checkpoint names it.
        """
        last = self._last
        if last.chain is not chain:
            last = self._last = _ReplyReaders(chain, self._write_rows(chain))
        found = last.readers.get(head)
        if found is None:
            rows: dict[str, Any] = {
                fld[len(head) :]: self._row(value)
                for fld, value in chain.items()
                if fld.startswith(head) and not fld.startswith(WREF)
            }
            found = last.readers[head] = (rows, ChainReader(rows, last.writes, self.policy))
        return found

    def remember(self, thread_id: str, ns: str, channel: str, link: Link | None) -> None:
        """Cache a version read or written, unless a newer one is cached."""
        if link is None or not self.policy.enabled:
            return
        cached = self.chains.get(thread_id, ns, channel)
        if cached is None or cached.version <= link.version:
            self.chains.put(thread_id, ns, channel, link)

    # -- checkpoints: the record, its refs and its blob fields (_record_format) ---------
    EMPTY = _record_format.EMPTY
    encode_put = _record_format.encode_put
    decode_entry = _record_format.decode_entry
    record_version = staticmethod(_record_format.record_version)
    blob_fields = staticmethod(_record_format.blob_fields)
    blob_field = staticmethod(_record_format.blob_field)

    # -- pending writes and waits (_write_format) ----------------------------------------
    encode_write = _write_format.encode_write
    encode_write_ref = _write_format.encode_write_ref
    decode_writes = _write_format.decode_writes
    encode_wait = _write_format.encode_wait
    decode_wait = _write_format.decode_wait
    wait_deadline_ms = staticmethod(_write_format.wait_deadline_ms)
    rethread_wait = staticmethod(_write_format.rethread_wait)


def now_utc() -> datetime:
    """The current time, UTC (one place so tests can reason about it)."""
    return datetime.now(timezone.utc)
