"""Encoding of everything the Redis saver stores, and decoding back (no I/O).

One place per format (agreement 5): :meth:`Codec.encode_value` /
:meth:`Codec.decode_value` for one channel value (blobs and pending writes
alike); records, refs, writes and waits around it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import ormsgpack
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    ChainCache,
    DeltaPolicy,
    Link,
    WriteCache,
    WriteRef,
    WriteRows,
    encode_value,
    snapshot_link,
)
from langgraph_durable.checkpointers._delta_read import ChainReader, rebuilds_held
from langgraph_durable.checkpointers._errors import CorruptCheckpointError
from langgraph_durable.checkpointers._readable import mark_readable
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.checkpointers._waits import WaitEntry, extract_wait
from langgraph_durable.checkpointers.redis._delta_lua import WREF
from langgraph_durable.migrations import SCHEMA_VERSION_KEY, is_migrated_version

SEP = "\x00"
RECORD_FORMAT = 2
"""Format of a checkpoint record, ``[format, checkpoint type, checkpoint bytes,
metadata type, metadata bytes, schema version]`` and since layout step 6
(format 2) ``ts in microseconds, flags``. Format 2 leaves out what the record
holds otherwise (~90 bytes of ~470 a checkpoint, issue 12): the checkpoint's
``id`` (the record's field), its ``ts`` text when the microseconds give it back
exactly, and the serializer type ``msgpack`` (stored as nil). The metadata is
the caller's, exactly: the schema version is the record's own field. Flag 1
says the metadata has no ``schema_version`` key of its own (a saver of the
previous release then shows the record's there, as it always did). Records of
format 1 hold the saver's key in their metadata too, which reads leave out."""
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SV_IN_RECORD = 1
MAX_INDEXED = 512
"""Longest canonical metadata value kept in the filter index (longer ones are
filtered in Python)."""


def canonical(value: Any) -> str | None:
    """JSON text of a scalar metadata value for the index, or ``None`` if not indexed.

    ``1`` and ``1.0`` share a text (they are equal filters); ``True`` and ``1``
    do not (as in PostgreSQL's jsonb).
    """
    if value is None or isinstance(value, bool):
        text = json.dumps(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        return None
    return text if len(text) <= MAX_INDEXED else None


def index_prefix(key: str, value: Any) -> str | None:
    """The metadata-index member prefix for ``key == value``, or ``None``.

    ``schema_version`` is not indexed since layout step 5 (the saver then wrote
    its own version there on every checkpoint: one sorted-set entry each,
    ~0.15x the payload of a growing thread); a list filtering on it checks the
    metadata instead, as for any key the index does not answer.
    """
    if key == SCHEMA_VERSION_KEY:
        return None
    text = canonical(value)
    if text is None:
        return None
    prefix = json.dumps(key, ensure_ascii=False) + SEP + text + SEP
    try:
        prefix.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate cannot be sent to Redis; no stored metadata holds one
        # (puts refuse them), so the Python-side match answers it (no match)
        return None
    return prefix


STEP_PREFIX = json.dumps("step") + SEP
"""Prefix of the ``step`` index members: kept in the refs, left out of the metadata index."""


def is_indexed(prefix: str) -> bool:
    """Whether the metadata index (``x``) holds members with ``prefix``.

    Since layout step 6 it leaves out ``step``: unique per checkpoint, an
    entry each (~0.16x the payload of a growing thread) for a rare filter;
    the list script checks a step filter against the checkpoint's refs,
    which keep every prefix (issue 12).
    """
    return not prefix.startswith(STEP_PREFIX)


def _ts_text(us: int) -> str:
    return (_EPOCH + timedelta(microseconds=us)).isoformat()


def _ts_micros(ts: Any) -> int | None:
    """``ts`` in microseconds since the epoch if they give back the same text, else ``None``."""
    if not isinstance(ts, str):
        return None
    try:
        when = datetime.fromisoformat(ts)
        if when.utcoffset() != timedelta(0):
            return None
        us = (when - _EPOCH) // timedelta(microseconds=1)
    except (ValueError, OverflowError):
        return None
    return us if _ts_text(us) == ts else None


def _is_inline(value: Any) -> bool:
    # as langgraph-checkpoint-postgres: primitives live in the checkpoint record
    return value is None or isinstance(value, (str, int, float, bool))


class StaleKnown(Exception):
    """A value read without its chain is not the version the saver holds: read again."""


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
        # issue 12: what a put may extend, per (thread, namespace, channel)
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

    EMPTY = b"empty\x00"
    DELTA = b"delta\x00"
    """A delta of layout steps 1-4: ``delta\\0<base>\\0<blob>`` (read, no longer written)."""
    DELTA2 = b"delta2\x00"
    """A delta since layout step 5: ``delta2\\0<blob>`` (see ``_delta_lua``)."""

    @classmethod
    def is_delta(cls, raw: bytes | None) -> bool:
        """Whether stored value bytes are a delta (either form)."""
        return raw is not None and (raw.startswith(cls.DELTA) or raw.startswith(cls.DELTA2))

    # -- growing channel values (issue 12) --------------------------------------
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
        """The blob fields whose versions this saver holds whole (issue 3).

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

    # -- checkpoints ----------------------------------------------------------
    def encode_put(
        self,
        ns: str,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: Mapping[str, Any],
        parent_id: str | None,
        schema_version: int,
        *,
        thread_id: str = "",
        deltas: bool = True,
        checks: list[Any] | None = None,
    ) -> tuple[bytes, bytes, list[bytes], list[str], list[tuple[str, Link | None]]]:
        """``(record, refs, blob field/value pairs, index members, chain states)`` of a put.

        The chain states go to :meth:`remember` once the put is stored. With
        ``checks`` (a list), deltas may refer to the parent's pending writes
        and the put script's checks of them are appended to it.
        """
        values = checkpoint["channel_values"]
        inline = {k: v for k, v in values.items() if _is_inline(v)}
        stored = dict(checkpoint)
        stored["channel_values"] = inline
        # what the record holds otherwise (format 2); decode_entry puts it back
        stored.pop("id", None)
        ts_us = _ts_micros(stored.get("ts"))
        if ts_us is not None:
            del stored["ts"]
        flags = 0 if SCHEMA_VERSION_KEY in metadata else _SV_IN_RECORD
        ck_type, ck_bytes = dumps_exact(self.serde, stored, field="checkpoint")
        md_type, md_bytes = dumps_exact(self.serde, metadata, field="metadata")
        record = ormsgpack.packb(
            [
                RECORD_FORMAT,
                None if ck_type == "msgpack" else ck_type,
                ck_bytes,
                None if md_type == "msgpack" else md_type,
                md_bytes,
                schema_version,
                ts_us,
                flags,
            ]
        )
        blobs: list[bytes] = []
        links: list[tuple[str, Link | None]] = []
        for ch, ver in new_versions.items():
            if ch in inline:
                continue
            blobs.append(self.blob_field(ns, ch, ver).encode())
            if ch in values:
                raw, link = self.encode_channel_value(
                    thread_id,
                    ns,
                    ch,
                    str(ver),
                    values[ch],
                    deltas=deltas,
                    writes_of=parent_id,
                    checks=checks,
                )
                blobs.append(raw)
                links.append((ch, link))
            else:
                blobs.append(self.EMPTY)
        fields = [
            self.blob_field(ns, ch, ver)
            for ch, ver in checkpoint["channel_versions"].items()
            if ch not in inline
        ]
        cid = checkpoint["id"]
        prefixes = [p for p in (index_prefix(k, v) for k, v in metadata.items()) if p is not None]
        members = [p + cid + SEP + ns for p in prefixes if is_indexed(p)]
        counters = metadata.get("counters_since_delta_snapshot") or {}
        delta = [str(ch) for ch in counters] if isinstance(counters, dict) else []
        # the index members' prefixes only: the scripts append cid\0ns (a 1 last
        # says so; refs of layout steps 1-4 hold whole members)
        refs = ormsgpack.packb(
            [parent_id or "", fields, prefixes, [str(k) for k in values], delta, 1]
        )
        return record, refs, blobs, members, links

    @staticmethod
    def record_version(record: bytes) -> int:
        """The schema version stored in a checkpoint record (0 if unreadable)."""
        try:
            return int(ormsgpack.unpackb(record)[5] or 0)
        except Exception:
            return 0  # decode_entry reports a corrupt record with its names

    @staticmethod
    def blob_fields(refs: bytes | None) -> list[bytes]:
        """The blob fields a checkpoint's refs point to."""
        if not refs:
            return []
        try:
            return [f.encode() for f in ormsgpack.unpackb(refs)[1] or []]
        except Exception:
            return []  # decode_entry reports the corrupt refs with its names

    @staticmethod
    def blob_field(ns: str, channel: str, version: Any) -> str:
        """Field of a channel value in the thread's blob hash."""
        return f"{ns}{SEP}{channel}{SEP}{version}"

    def decode_entry(
        self,
        thread_id: str,
        entry: Sequence[Any],
        known: Mapping[str, Link] | None = None,
    ) -> tuple[CheckpointTuple, int]:
        """A ``CheckpointTuple`` (before ``_finish_read``) and its stored schema version.

        ``entry`` is what the ``load`` Lua function returns:
        ``[ns, cid, record, refs, blob values, write values]``; ``known`` as
        for :meth:`decode_channel_value`.
        """
        ns, cid = entry[0].decode(), entry[1].decode()
        where = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}

        def corrupt(channel: str, exc: Exception) -> CorruptCheckpointError:
            return CorruptCheckpointError(**where, channel=channel, reason=str(exc) or repr(exc))

        try:
            rec = ormsgpack.unpackb(entry[2])
            fmt, ck_type, ck_bytes, md_type, md_bytes, version = rec[:6]
            # rec[7], the flags, only matter to older readers (see RECORD_FORMAT)
            ts_us = rec[6] if fmt >= 2 else None
            checkpoint = loads_exact(self.serde, ck_type or "msgpack", ck_bytes)
            if fmt >= 2:
                head: dict[str, Any] = {"v": checkpoint["v"]} if "v" in checkpoint else {}
                if ts_us is not None:
                    head["ts"] = _ts_text(ts_us)
                head["id"] = cid
                checkpoint = {**head, **checkpoint}
        except Exception as exc:
            raise corrupt("<checkpoint>", exc) from exc
        try:
            metadata = loads_exact(self.serde, md_type or "msgpack", md_bytes)
            if fmt < 2:
                # format 1 wrote the record's version into the metadata too
                # (over any value of the caller's): leave the saver's key out
                own = metadata.get(SCHEMA_VERSION_KEY)
                if type(own) is int and own == version:
                    metadata = {k: v for k, v in metadata.items() if k != SCHEMA_VERSION_KEY}
        except Exception as exc:
            raise corrupt("<metadata>", exc) from exc
        parent = ""
        fields: list[Any] = []
        if entry[3]:
            try:
                refs = ormsgpack.unpackb(entry[3])
                parent, fields = refs[0], refs[1] or []
            except Exception as exc:
                raise corrupt("<refs>", exc) from exc
        values = dict(checkpoint.get("channel_values") or {})
        skip = len(ns) + 1
        pairs = entry[6] if len(entry) > 6 and entry[6] else []
        chain = pairs if isinstance(pairs, dict) else chain_map(pairs)
        for fld, raw in zip(fields, entry[4] or [], strict=False):
            if raw is None or raw == self.EMPTY:
                continue
            channel = fld[skip:].rsplit(SEP, 1)[0]
            try:
                values[channel] = self.decode_channel_value(thread_id, ns, fld, raw, chain, known)
            except StaleKnown:
                raise
            except Exception as exc:
                raise corrupt(channel, exc) from exc
        checkpoint["channel_values"] = values
        writes = self.decode_writes(entry[5] or [], where)
        config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}
        }
        parent_config: RunnableConfig | None = (
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
            if parent
            else None
        )
        tup = CheckpointTuple(config, checkpoint, metadata, parent_config, writes)
        return tup, int(version or 0)

    # -- pending writes -------------------------------------------------------
    def encode_write(
        self, task_id: str, idx: int, channel: str, task_path: str, value: Any
    ) -> bytes:
        """``task\\0idx\\0channel\\0path\\0value``: the Lua side reads the channel."""
        return self.encode_write_ref(task_id, idx, channel, task_path, value)[0]

    def encode_write_ref(
        self, task_id: str, idx: int, channel: str, task_path: str, value: Any
    ) -> tuple[bytes, WriteRef]:
        """:meth:`encode_write`, and the write as a delta may refer to it (issue 12)."""
        type_, data = dumps_exact(self.serde, value, field="channel value", channel=channel)
        head = SEP.join((task_id, str(idx), channel, task_path, type_)) + SEP
        return head.encode() + data, WriteRef(task_id, idx, type_, data)

    def decode_writes(self, raws: Sequence[Any], where: dict[str, str]) -> list[PendingWrite]:
        """Pending writes in ``writes_sort_key`` order.

        Raises:
            CorruptCheckpointError: a record is malformed or its value unreadable
                (named by its channel when that much can be read).
        """
        rows = []
        for raw in raws:
            if raw is None:
                continue
            parts = raw.split(b"\x00", 4)
            try:
                task_id, idx, channel, path, data = parts
                task, ch = task_id.decode(), channel.decode()
                key = writes_sort_key(path.decode(), task, int(idx))
                value = self.decode_value(data)
            except Exception as exc:
                raise CorruptCheckpointError(
                    **where,
                    channel=_channel_of(parts),
                    reason=f"pending write: {exc or type(exc).__name__}",
                ) from exc
            rows.append((key, (task, ch, value)))
        rows.sort(key=lambda r: r[0])
        return [w for _, w in rows]

    # -- waits ----------------------------------------------------------------
    def encode_wait(
        self, thread_id: str, ns: str, cid: str, task_id: str, interrupt: Any, now: datetime
    ) -> tuple[str, bytes, str] | None:
        """``(field, entry, deadline ms or '')`` of a marked interrupt, else ``None``."""
        info = extract_wait(interrupt)
        interrupt_id = getattr(interrupt, "id", None)
        if info is None or not isinstance(interrupt_id, str):
            return None
        entry = ormsgpack.packb(
            {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": cid,
                "interrupt_id": interrupt_id,
                "task_id": task_id,
                "kind": info.kind,
                "deadline": info.deadline.isoformat() if info.deadline else None,
                "approvers": list(info.approvers),
                "escalation_level": info.escalation_level,
                "value": self.encode_value(getattr(interrupt, "value", interrupt)),
                "created_at": now.isoformat(),
            }
        )
        deadline = "" if info.deadline is None else str(int(info.deadline.timestamp() * 1000))
        return SEP.join((ns, cid, task_id, interrupt_id)), entry, deadline

    def decode_wait(self, raw: bytes) -> WaitEntry:
        """A :class:`WaitEntry` from a stored wait."""
        d = ormsgpack.unpackb(raw)
        info = extract_wait(
            {
                "__durable_wait__": {
                    "kind": d["kind"],
                    "deadline": d["deadline"],
                    "approvers": d["approvers"],
                    "escalation_level": d["escalation_level"],
                }
            }
        )
        assert info is not None  # stored only when extract_wait accepted it
        try:
            value = self.decode_value(d["value"])
        except Exception as exc:
            raise CorruptCheckpointError(
                thread_id=d["thread_id"],
                checkpoint_ns=d["checkpoint_ns"],
                checkpoint_id=d["checkpoint_id"],
                channel="__interrupt__",
                reason=str(exc),
            ) from exc
        created = d.get("created_at")
        return WaitEntry(
            thread_id=d["thread_id"],
            checkpoint_ns=d["checkpoint_ns"],
            checkpoint_id=d["checkpoint_id"],
            interrupt_id=d["interrupt_id"],
            info=info,
            value=value,
            created_at=datetime.fromisoformat(created) if created else None,
        )

    @staticmethod
    def wait_deadline_ms(raw: bytes) -> str:
        """The deadline of a stored wait in epoch ms ('' when it has none)."""
        deadline = ormsgpack.unpackb(raw).get("deadline")
        if not deadline:
            return ""
        return str(int(datetime.fromisoformat(deadline).timestamp() * 1000))

    @staticmethod
    def rethread_wait(raw: bytes, thread_id: str) -> bytes:
        """A stored wait moved to another thread (copy_thread)."""
        d = ormsgpack.unpackb(raw)
        d["thread_id"] = thread_id
        return ormsgpack.packb(d)


def _channel_of(parts: Sequence[bytes]) -> str:
    """The channel of a split pending-write record, or a stand-in when it is unreadable."""
    if len(parts) < 5:
        return "<pending write>"
    try:
        return parts[2].decode()
    except UnicodeDecodeError:
        return "<pending write>"


def chain_map(pairs: Sequence[Any]) -> dict[str, bytes]:
    """Delta chain links (issue 12) as field -> stored bytes, from a flat reply."""
    return {pairs[i].decode(): pairs[i + 1] for i in range(0, len(pairs), 2)}


def share_chains(entries: Sequence[Any]) -> None:
    """Give every listed entry the chain links of the whole reply.

    The list script sends each link once per reply (the entries of a history
    share most of their chains), so an entry's own links may have come with
    an earlier one.
    """
    merged: dict[str, bytes] = {}
    for entry in entries:
        if len(entry) > 6 and entry[6]:
            merged.update(entry[6] if isinstance(entry[6], dict) else chain_map(entry[6]))
    if merged:
        for entry in entries:
            if len(entry) > 6:
                entry[6] = merged


def now_utc() -> datetime:
    """The current time, UTC (one place so tests can reason about it)."""
    return datetime.now(timezone.utc)
