"""Activity results on Redis: the ``ActivityStore`` protocol in the thread's slot.

One hash per thread, ``<prefix>:{t:<thread>}:act`` (the thread's hash tag, so
it lives in the thread's Cluster slot), field = idempotency key, value = the
result encoded like a channel value (the saver's serde, no pickle). ``HSETNX``
makes the first writer win. ``delete_thread`` deletes the hash; with a TTL
the hash expires like the thread's keys (refreshed when a result is written).

The operations are I/O-free generators of :class:`~langgraph_durable.checkpointers.redis._core.Call`
run by the savers' own shells (``_run``), sync and async alike.
"""

from __future__ import annotations

from typing import Any, TypeVar

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers._errors import CorruptCheckpointError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._ops import Call, Op

T = TypeVar("T")


def activity_key(core: RedisCore, thread_id: str) -> str:
    """The hash of ``thread_id``'s activity results (same hash tag as its other keys)."""
    return core.keys.activities(thread_id)


def _decode(core: RedisCore, thread_id: str, key: str, raw: Any) -> ActivityRecord | None:
    if raw is None:
        return None
    try:
        value = core.codec.decode_value(raw)
    except Exception as exc:
        raise CorruptCheckpointError(
            thread_id=thread_id,
            checkpoint_ns="",
            checkpoint_id="",
            channel=f"<activity {key}>",
            reason=f"{type(exc).__name__}: {exc}",
        ) from exc
    return ActivityRecord(thread_id=thread_id, key=key, value=value)


def get_activity(core: RedisCore, thread_id: str, key: str) -> Op[ActivityRecord | None]:
    """One HGET."""
    thread_id, key = check_id("thread_id", thread_id), check_id("key", key)
    replies = yield Call([("HGET", activity_key(core, thread_id), key)])
    return _decode(core, thread_id, key, replies[0])


def put_activity(core: RedisCore, thread_id: str, key: str, value: Any) -> Op[ActivityRecord]:
    """HSETNX then HGET (the winner's value) in one pipeline, plus the TTL."""
    thread_id, key = check_id("thread_id", thread_id), check_id("key", key)
    hkey = activity_key(core, thread_id)
    cmds: list[Any] = [("HSETNX", hkey, key, core.codec.encode_value(value)), ("HGET", hkey, key)]
    if core.ttl_ms:
        cmds.append(("PEXPIRE", hkey, core.ttl_ms))
    replies = yield Call(cmds)
    record = _decode(core, thread_id, key, replies[1])
    return record if record is not None else ActivityRecord(thread_id, key, value)


def delete_activities(core: RedisCore, thread_id: str) -> Op[Any]:
    """Delete a thread's activity results."""
    yield Call([("DEL", activity_key(core, check_id("thread_id", thread_id)))])
