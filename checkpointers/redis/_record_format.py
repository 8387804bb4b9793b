"""The checkpoint record and its refs: what a put stores and a read decodes (no I/O).

A checkpoint is stored as its record (the checkpoint without its large channel
values, the metadata, the schema version), its refs (the parent, the blob
fields it reads, its index prefixes) and one blob field per channel value
(:class:`~langgraph_durable.checkpointers.redis._codec.Codec` encodes those).
The functions here are :class:`Codec` methods (``codec.encode_put(...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import ormsgpack
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import Link
from langgraph_durable.checkpointers._errors import CorruptCheckpointError
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.checkpointers.redis._index_format import SEP, index_prefix, is_indexed
from langgraph_durable.migrations import SCHEMA_VERSION_KEY

if TYPE_CHECKING:
    from langgraph_durable.checkpointers.redis._codec import Codec

RECORD_FORMAT = 2
"""Format of a checkpoint record, ``[format, checkpoint type, checkpoint bytes,
metadata type, metadata bytes, schema version]`` and since layout step 6
(format 2) ``ts in microseconds, flags``. Format 2 leaves out what the record
holds otherwise (~90 bytes of ~470 a checkpoint): the checkpoint's
``id`` (the record's field), its ``ts`` text when the microseconds give it back
exactly, and the serializer type ``msgpack`` (stored as nil). The metadata is
the caller's, exactly: the schema version is the record's own field. Flag 1
says the metadata has no ``schema_version`` key of its own (a saver of the
previous release then shows the record's there, as it always did). Records of
format 1 hold the saver's key in their metadata too, which reads leave out."""
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SV_IN_RECORD = 1
EMPTY = b"empty\x00"
"""The stored bytes of a channel that has a version but no value."""


class StaleKnown(Exception):
    """A value read without its chain is not the version the saver holds: read again."""


def blob_field(ns: str, channel: str, version: Any) -> str:
    """Field of a channel value in the thread's blob hash."""
    return f"{ns}{SEP}{channel}{SEP}{version}"


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


# -- a put ------------------------------------------------------------------------------
def encode_put(
    codec: Codec,
    ns: str,
    checkpoint: Checkpoint,
    metadata: Mapping[str, Any],
    new_versions: Mapping[str, Any],
    parent_id: str | None,
    schema_version: int,
    *,
    thread_id: str = "",
    deltas: bool = True,
    checks: list[Any] | None = None,
) -> tuple[bytes, bytes, list[bytes], list[str], list[tuple[str, Link | None]]]:
    """``(record, refs, blob field/value pairs, index members, chain states)`` of a put.

    The chain states go to :meth:`Codec.remember` once the put is stored. With
    ``checks`` (a list), deltas may refer to the parent's pending writes and
    the put script's checks of them are appended to it.
    """
    values = checkpoint["channel_values"]
    inline = {k: v for k, v in values.items() if _is_inline(v)}
    record = _record(codec.serde, checkpoint, inline, metadata, schema_version)
    blobs: list[bytes] = []
    links: list[tuple[str, Link | None]] = []
    for ch, ver in new_versions.items():
        if ch in inline:
            continue
        blobs.append(blob_field(ns, ch, ver).encode())
        if ch not in values:
            blobs.append(EMPTY)
            continue
        raw, link = codec.encode_channel_value(
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
    refs, members = _refs(ns, checkpoint, inline, metadata, parent_id)
    return record, refs, blobs, members, links


def _record(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    inline: dict[str, Any],
    metadata: Mapping[str, Any],
    schema_version: int,
) -> bytes:
    """The checkpoint record (format 2): the checkpoint with its inline values only."""
    stored: dict[str, Any] = dict(checkpoint)
    stored["channel_values"] = inline
    # what the record holds otherwise (format 2); decode_entry puts it back
    stored.pop("id", None)
    ts_us = _ts_micros(stored.get("ts"))
    if ts_us is not None:
        del stored["ts"]
    flags = 0 if SCHEMA_VERSION_KEY in metadata else _SV_IN_RECORD
    ck_type, ck_bytes = dumps_exact(serde, stored, field="checkpoint")
    md_type, md_bytes = dumps_exact(serde, metadata, field="metadata")
    return ormsgpack.packb(
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


def _refs(
    ns: str,
    checkpoint: Checkpoint,
    inline: dict[str, Any],
    metadata: Mapping[str, Any],
    parent_id: str | None,
) -> tuple[bytes, list[str]]:
    """The checkpoint's refs and its metadata-index members."""
    fields = [
        blob_field(ns, ch, ver)
        for ch, ver in checkpoint["channel_versions"].items()
        if ch not in inline
    ]
    cid = checkpoint["id"]
    prefixes = [p for p in (index_prefix(k, v) for k, v in metadata.items()) if p is not None]
    members = [p + cid + SEP + ns for p in prefixes if is_indexed(p)]
    counters = metadata.get("counters_since_delta_snapshot") or {}
    delta = [str(ch) for ch in counters] if isinstance(counters, dict) else []
    values = checkpoint["channel_values"]
    # the index members' prefixes only: the scripts append cid\0ns (a 1 last
    # says so; refs of layout steps 1-4 hold whole members)
    refs = ormsgpack.packb([parent_id or "", fields, prefixes, [str(k) for k in values], delta, 1])
    return refs, members


def record_version(record: bytes) -> int:
    """The schema version stored in a checkpoint record (0 if unreadable)."""
    try:
        return int(ormsgpack.unpackb(record)[5] or 0)
    except Exception:
        return 0  # decode_entry reports a corrupt record with its names


def blob_fields(refs: bytes | None) -> list[bytes]:
    """The blob fields a checkpoint's refs point to."""
    if not refs:
        return []
    try:
        return [f.encode() for f in ormsgpack.unpackb(refs)[1] or []]
    except Exception:
        return []  # decode_entry reports the corrupt refs with its names


# -- a read -----------------------------------------------------------------------------
def decode_entry(
    codec: Codec,
    thread_id: str,
    entry: Sequence[Any],
    known: Mapping[str, Link] | None = None,
) -> tuple[CheckpointTuple, int]:
    """A ``CheckpointTuple`` (before ``_finish_read``) and its stored schema version.

    ``entry`` is what the ``load`` Lua function returns:
    ``[ns, cid, record, refs, blob values, write values]``; ``known`` as
    for :meth:`Codec.decode_channel_value`.
    """
    ns, cid = entry[0].decode(), entry[1].decode()
    where = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}

    def corrupt(channel: str, exc: Exception) -> CorruptCheckpointError:
        return CorruptCheckpointError(**where, channel=channel, reason=str(exc) or repr(exc))

    checkpoint, metadata, version = _decode_record(codec.serde, entry[2], cid, corrupt)
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
        if raw is None or raw == EMPTY:
            continue
        channel = fld[skip:].rsplit(SEP, 1)[0]
        try:
            values[channel] = codec.decode_channel_value(thread_id, ns, fld, raw, chain, known)
        except StaleKnown:
            raise
        except Exception as exc:
            raise corrupt(channel, exc) from exc
    checkpoint["channel_values"] = values
    writes = codec.decode_writes(entry[5] or [], where)
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


def _decode_record(
    serde: SerializerProtocol, raw: bytes, cid: str, corrupt: Any
) -> tuple[Any, Any, Any]:
    """``(checkpoint, metadata, schema version)`` of a record, as they were put."""
    try:
        rec = ormsgpack.unpackb(raw)
        fmt, ck_type, ck_bytes, md_type, md_bytes, version = rec[:6]
        # rec[7], the flags, only matter to older readers (see RECORD_FORMAT)
        ts_us = rec[6] if fmt >= 2 else None
        checkpoint = loads_exact(serde, ck_type or "msgpack", ck_bytes)
        if fmt >= 2:
            head: dict[str, Any] = {"v": checkpoint["v"]} if "v" in checkpoint else {}
            if ts_us is not None:
                head["ts"] = _ts_text(ts_us)
            head["id"] = cid
            checkpoint = {**head, **checkpoint}
    except Exception as exc:
        raise corrupt("<checkpoint>", exc) from exc
    try:
        metadata = loads_exact(serde, md_type or "msgpack", md_bytes)
        if fmt < 2:
            # format 1 wrote the record's version into the metadata too
            # (over any value of the caller's): leave the saver's key out
            own = metadata.get(SCHEMA_VERSION_KEY)
            if type(own) is int and own == version:
                metadata = {k: v for k, v in metadata.items() if k != SCHEMA_VERSION_KEY}
    except Exception as exc:
        raise corrupt("<metadata>", exc) from exc
    return checkpoint, metadata, version


def chain_map(pairs: Sequence[Any]) -> dict[str, bytes]:
    """Delta chain links as field -> stored bytes, from a flat reply."""
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
