"""A corrupted value or malformed record raises CorruptCheckpointError naming thread, namespace,
checkpoint and channel."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import CorruptCheckpointError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys


def _put(saver: RedisSaver, tid: str, ns: str) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": ["hi", {"k": 1}], "count": 3}
    cp["channel_versions"] = {k: saver.get_next_version(None, None) for k in cp["channel_values"]}
    config: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}
    stored = saver.put(config, cp, {"step": 1}, cp["channel_versions"])
    saver.put_writes(stored, [("messages", ["pending"])], "task-1")
    return stored


def test_corrupt_channel_value(sync_saver: RedisSaver, raw: redis.Redis) -> None:
    tid, ns = f"t-{uuid.uuid4()}", "child:1"
    stored = _put(sync_saver, tid, ns)
    healthy = _put(sync_saver, f"h-{uuid.uuid4()}", ns)
    blobs = Keys(sync_saver.prefix).thread(tid)[4]
    (field,) = [f for f in raw.hkeys(blobs) if b"messages" in f]
    raw.hset(blobs, field, b"msgpack\x00\xc1\xc1garbage")
    with pytest.raises(CorruptCheckpointError) as err:
        sync_saver.get_tuple(stored)
    e = err.value
    assert (e.thread_id, e.checkpoint_ns, e.channel) == (tid, ns, "messages")
    assert e.checkpoint_id == stored["configurable"]["checkpoint_id"]
    assert tid in str(e) and "messages" in str(e)
    with pytest.raises(CorruptCheckpointError):
        list(sync_saver.list({"configurable": {"thread_id": tid}}))
    # other threads are unaffected
    assert sync_saver.get_tuple(healthy).checkpoint["channel_values"]["count"] == 3


def test_corrupt_pending_write_and_record(sync_saver: RedisSaver, raw: redis.Redis) -> None:
    tid = f"t-{uuid.uuid4()}"
    stored = _put(sync_saver, tid, "")
    keys = Keys(sync_saver.prefix).thread(tid)
    (member,) = raw.hkeys(keys[6])
    value = raw.hget(keys[6], member)
    raw.hset(keys[6], member, value.rsplit(b"\x00", 1)[0] + b"\x00\xc1")
    with pytest.raises(CorruptCheckpointError) as err:
        sync_saver.get_tuple(stored)
    assert err.value.channel == "messages" and err.value.checkpoint_ns == ""
    (field,) = raw.hkeys(keys[2])
    raw.hset(keys[2], field, b"\x93not a record")
    with pytest.raises(CorruptCheckpointError) as err:
        sync_saver.get_tuple(stored)
    assert err.value.channel == "<checkpoint>"
    assert err.value.checkpoint_id == stored["configurable"]["checkpoint_id"]


MALFORMED_WRITES = {
    "no separators": b"garbage",
    "index not a number": b"task-1\x00one\x00messages\x00\x00msgpack\x00\x91\xa1x",
    "channel not UTF-8": b"task-1\x000\x00\xff\xfe\x00\x00msgpack\x00\x91\xa1x",
    "task id not UTF-8": b"\xff\x000\x00messages\x00\x00msgpack\x00\x91\xa1x",
    "path not UTF-8": b"task-1\x000\x00messages\x00\xc3\x00msgpack\x00\x91\xa1x",
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("damage", sorted(MALFORMED_WRITES))
async def test_malformed_pending_write_record_is_named(
    sync_saver: RedisSaver, raw: redis.Redis, damage: str, mode: str
) -> None:
    tid = f"t-{uuid.uuid4()}"
    stored = _put(sync_saver, tid, "child:1")
    keys = Keys(sync_saver.prefix).thread(tid)
    (member,) = raw.hkeys(keys[6])
    raw.hset(keys[6], member, MALFORMED_WRITES[damage])
    if mode == "sync":
        with pytest.raises(CorruptCheckpointError) as err:
            sync_saver.get_tuple(stored)
    else:
        kw = raw.get_connection_kwargs()
        db = kw.get("db", 0)
        # the embedded server listens on a unix socket only
        url = (
            f"unix://{kw['path']}?db={db}"
            if "path" in kw
            else f"redis://{kw['host']}:{kw['port']}/{db}"
        )
        async with AsyncRedisSaver.from_conn_string(url, prefix=sync_saver.prefix) as asaver:
            with pytest.raises(CorruptCheckpointError) as err:
                await asaver.aget_tuple(stored)
    e = err.value
    assert (e.thread_id, e.checkpoint_ns) == (tid, "child:1")
    assert e.checkpoint_id == stored["configurable"]["checkpoint_id"]
    readable = damage not in ("no separators", "channel not UTF-8")
    assert e.channel == ("messages" if readable else "<pending write>")
    assert "pending write" in e.reason
