"""put is all-or-nothing even when the connection drops; put and get_tuple take one round trip."""

from __future__ import annotations

import uuid
from typing import Any

import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys


def _checkpoint(saver: RedisSaver, size: int) -> Any:
    cp = empty_checkpoint()
    # fresh content each time: values that extend the last put's would be
    # stored as small deltas (issue 12), and the payload must stay large
    cp["channel_values"] = {f"ch{i}": [uuid.uuid4().hex + "x" * size] for i in range(20)}
    cp["channel_versions"] = {k: saver.get_next_version(None, None) for k in cp["channel_values"]}
    return cp


def _consistent(raw: redis.Redis, prefix: str, tid: str) -> tuple[int, int, int]:
    z, _za, c, r, *_ = Keys(prefix).thread(tid)
    # one MULTI/EXEC: the script of a dropped connection may still be queued on
    # the server and run between three separate reads (a false "half checkpoint")
    with raw.pipeline(transaction=True) as pipe:
        pipe.zcard(z)
        pipe.hlen(c)
        pipe.hlen(r)
        zc, hc, hr = pipe.execute()
    return zc, hc, hr


def test_dropped_connection_leaves_no_half_checkpoint(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    tid = f"t-{uuid.uuid4()}"
    config: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    outcomes = set()
    # a socket timeout far below the time the payload takes: the client gives
    # up (and drops the connection) while the server has the command
    client = redis.Redis.from_url(url, socket_timeout=0.0005, retry_on_timeout=False)
    client.connection_pool.connection_kwargs["retry"] = redis.retry.Retry(
        redis.backoff.NoBackoff(), 0
    )
    saver = RedisSaver(client, prefix=prefix)
    for attempt in range(60):
        if attempt >= 10 and "dropped" in outcomes:
            break  # under load the saver's retries may win several times in a row
        cp = _checkpoint(saver, 100_000)
        try:
            saver.put(config, cp, {"step": 1}, cp["channel_versions"])
            outcomes.add("ok")
        except StorageUnavailableError:
            outcomes.add("dropped")
        counts = _consistent(raw, prefix, tid)
        assert counts[0] == counts[1] == counts[2]  # checkpoint, record, refs: all or none
    client.close()
    assert "dropped" in outcomes
    with RedisSaver.from_conn_string(url, prefix=prefix) as reader:
        for tup in reader.list(config):
            # every visible checkpoint has every one of its 20 channels
            assert len(tup.checkpoint["channel_values"]) == 20


class _Counting(RedisSaver):
    calls = 0

    def _execute(self, cmds: list[Any]) -> list[Any]:
        type(self).calls += 1
        return super()._execute(cmds)


def test_put_and_get_tuple_are_one_round_trip(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    client = redis.Redis.from_url(url)
    saver = _Counting(client, prefix=prefix)
    saver.setup()
    tid = f"t-{uuid.uuid4()}"
    config: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    for step in range(3):
        cp = _checkpoint(saver, 10)
        _Counting.calls = 0
        config = saver.put(config, cp, {"step": step, "run_id": "r1"}, cp["channel_versions"])
        assert _Counting.calls == 1
        _Counting.calls = 0
        saver.put_writes(config, [("ch0", ["y"]), ("ch1", ["z"])], "task-1")
        assert _Counting.calls == 1
        _Counting.calls = 0
        assert saver.get_tuple({"configurable": {"thread_id": tid}}) is not None
        assert _Counting.calls == 1
    # a flushed script cache (restart, failover) costs a retry, not an error
    client.script_flush()
    _Counting.calls = 0
    assert saver.get_tuple(config) is not None
    assert _Counting.calls == 1
    client.close()
