"""Pending writes and the waits they index: their stored bytes and back (no I/O).

A pending write is ``task\\0idx\\0channel\\0path\\0<value bytes>`` (the Lua side
reads the channel); a wait is a msgpack map of the interrupt's wait marker and
value, kept in the wait shards. The functions here are
:class:`~langgraph_durable.checkpointers.redis._codec.Codec` methods
(``codec.encode_wait(...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import ormsgpack
from langgraph.checkpoint.base import PendingWrite, writes_sort_key

from langgraph_durable.checkpointers._delta import WriteRef
from langgraph_durable.checkpointers._errors import CorruptCheckpointError
from langgraph_durable.checkpointers._serde import dumps_exact
from langgraph_durable.checkpointers._waits import WaitEntry, extract_wait
from langgraph_durable.checkpointers.redis._index_format import SEP

if TYPE_CHECKING:
    from langgraph_durable.checkpointers.redis._codec import Codec


# -- pending writes ----------------------------------------------------------------------
def encode_write(
    codec: Codec, task_id: str, idx: int, channel: str, task_path: str, value: Any
) -> bytes:
    """``task\\0idx\\0channel\\0path\\0value``: the Lua side reads the channel."""
    return encode_write_ref(codec, task_id, idx, channel, task_path, value)[0]


def encode_write_ref(
    codec: Codec, task_id: str, idx: int, channel: str, task_path: str, value: Any
) -> tuple[bytes, WriteRef]:
    """:meth:`encode_write`, and the write as a delta may refer to it."""
    type_, data = dumps_exact(codec.serde, value, field="channel value", channel=channel)
    head = SEP.join((task_id, str(idx), channel, task_path, type_)) + SEP
    return head.encode() + data, WriteRef(task_id, idx, type_, data)


def decode_writes(codec: Codec, raws: Sequence[Any], where: dict[str, str]) -> list[PendingWrite]:
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
            value = codec.decode_value(data)
        except Exception as exc:
            raise CorruptCheckpointError(
                **where,
                channel=_channel_of(parts),
                reason=f"pending write: {exc or type(exc).__name__}",
            ) from exc
        rows.append((key, (task, ch, value)))
    rows.sort(key=lambda r: r[0])
    return [w for _, w in rows]


def _channel_of(parts: Sequence[bytes]) -> str:
    """The channel of a split pending-write record, or a stand-in when it is unreadable."""
    if len(parts) < 5:
        return "<pending write>"
    try:
        return parts[2].decode()
    except UnicodeDecodeError:
        return "<pending write>"


# -- waits ----------------------------------------------------------------------------------
def encode_wait(
    codec: Codec, thread_id: str, ns: str, cid: str, task_id: str, interrupt: Any, now: datetime
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
            "value": codec.encode_value(getattr(interrupt, "value", interrupt)),
            "created_at": now.isoformat(),
        }
    )
    deadline = "" if info.deadline is None else str(int(info.deadline.timestamp() * 1000))
    return SEP.join((ns, cid, task_id, interrupt_id)), entry, deadline


def decode_wait(codec: Codec, raw: bytes) -> WaitEntry:
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
        value = codec.decode_value(d["value"])
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


def wait_deadline_ms(raw: bytes) -> str:
    """The deadline of a stored wait in epoch ms ('' when it has none)."""
    deadline = ormsgpack.unpackb(raw).get("deadline")
    if not deadline:
        return ""
    return str(int(datetime.fromisoformat(deadline).timestamp() * 1000))


def rethread_wait(raw: bytes, thread_id: str) -> bytes:
    """A stored wait moved to another thread (copy_thread)."""
    d = ormsgpack.unpackb(raw)
    d["thread_id"] = thread_id
    return ormsgpack.packb(d)
