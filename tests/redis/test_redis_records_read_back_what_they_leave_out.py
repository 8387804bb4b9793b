"""A checkpoint record of format 2 (layout step 6) reads back exactly what was put.

It leaves out the checkpoint's ``id`` (the record's field), its ``ts`` when
microseconds since the epoch give the same text back, and the type name
``msgpack``; the schema version is the record's field, not a metadata key.
Timestamps that do not round-trip that way are kept as text, and records of
format 1 read as they were stored, less the ``schema_version`` key the saver
wrote into their metadata.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys

TIMESTAMPS = [
    "2026-11-29T17:44:46.100528+00:00",
    "2026-11-29T17:44:46+00:00",  # no fraction: isoformat leaves it out
    "2026-11-29T17:44:46.000000+00:00",  # a fraction isoformat would not write
    "2026-11-29T18:44:46.100528+01:00",  # another offset
    "2026-11-29T17:44:46.100528",  # naive
    "1969-12-31T23:59:59.999999+00:00",  # before the epoch
    "not a time",
]


@pytest.mark.parametrize("ts", TIMESTAMPS)
def test_checkpoint_and_metadata_read_back_exactly(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis, ts: str
) -> None:
    cp = empty_checkpoint()
    cp["ts"] = ts
    cp["channel_values"] = {"n": 3, "items": ["a", "b"]}
    cp["channel_versions"] = {"n": 1, "items": 1}
    md: dict[str, Any] = {"source": "input", "step": -1, "parents": {}, "note": "x"}
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    stored = sync_saver.put(config, cp, md, {"n": 1, "items": 1})
    tup = sync_saver.get_tuple(stored)
    assert tup is not None
    assert tup.checkpoint == cp
    assert tup.checkpoint["ts"] == ts and tup.checkpoint["id"] == cp["id"]
    assert tup.metadata == md  # exactly: the schema version is the record's field
    key, field = Keys(redis_prefix[1]).thread("t")[2], b"\x00" + cp["id"].encode()
    record = ormsgpack.unpackb(raw.hget(key, field))
    assert record[0] == 2 and record[1] is None and record[3] is None
    assert (record[6] is not None) == (ts in TIMESTAMPS[:2] + TIMESTAMPS[5:6])
    assert record[5] == 0 and sync_saver.schema_version(stored) == 0
    assert record[7] == 1  # no key of the caller's: older readers show the record's
    listed = list(sync_saver.list({"configurable": {"thread_id": "t"}}))
    assert [t.checkpoint for t in listed] == [cp]


def test_a_format_1_record_reads_as_stored(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    cp = empty_checkpoint()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    stored = sync_saver.put(config, cp, {"source": "input", "step": -1}, {})
    key, field = Keys(redis_prefix[1]).thread("t")[2], b"\x00" + cp["id"].encode()
    md = {"source": "input", "step": -1}
    ck_type, ck_bytes = sync_saver.serde.dumps_typed(cp)
    # format 1 wrote the record's version into the metadata as well
    md_type, md_bytes = sync_saver.serde.dumps_typed({**md, "schema_version": 0})
    raw.hset(key, field, ormsgpack.packb([1, ck_type, ck_bytes, md_type, md_bytes, 0]))
    tup = sync_saver.get_tuple(stored)
    assert tup is not None and tup.checkpoint == cp and tup.metadata == md
    assert sync_saver.schema_version(stored) == 0
