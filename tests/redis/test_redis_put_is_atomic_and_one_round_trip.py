"""put is all-or-nothing even when the connection drops; put and get_tuple take one round trip."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from langgraph_durable.checkpointers.redis._runner import RedisRunner
from tests.redis._cutting_proxy import CuttingProxy


def _checkpoint(saver: RedisSaver, size: int) -> Any:
    cp = empty_checkpoint()
    # fresh content each time: values that extend the last put's would be
    # stored as small deltas, and the payload must stay large
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


@pytest.mark.parametrize("cut", ["request", "reply"])
def test_dropped_connection_leaves_no_half_checkpoint(
    cut: str, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    # every connection the saver opens is cut in the middle of a 2 MB put: before
    # the server has all of it ("request": it never runs), or after it ran but
    # before the reply arrives ("reply"). Either way the put is all or nothing.
    url, prefix = redis_prefix
    tid = f"t-{uuid.uuid4()}"
    config: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    thread: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    with RedisSaver.from_conn_string(url, prefix=prefix) as direct:
        direct.setup()
        # the first put, straight to the server, also loads the put script there:
        # a proxied EVALSHA then runs at once (a NOSCRIPT reply would run nothing)
        first = _checkpoint(direct, 100_000)
        config = direct.put(config, first, {"step": 0}, first["channel_versions"])
    before = _consistent(raw, prefix, tid)
    assert before == (1, 1, 1)

    proxy = CuttingProxy(url, mode=cut, cut_after=1_000_000)
    client = redis.Redis.from_url(proxy.url())
    try:
        saver = RedisSaver(client, prefix=prefix)
        cp = _checkpoint(saver, 100_000)
        with pytest.raises(StorageUnavailableError):
            saver.put(config, cp, {"step": 1}, cp["channel_versions"])
        assert proxy.cuts >= 1
    finally:
        client.close()
        proxy.close()

    after = _consistent(raw, prefix, tid)
    assert after[0] == after[1] == after[2]  # checkpoint, record, refs: all or none
    # the server ran it (every retry writes the same checkpoint) or never saw all of it
    assert after == ((2, 2, 2) if cut == "reply" else before)
    with RedisSaver.from_conn_string(url, prefix=prefix) as reader:
        latest = reader.get_tuple(thread)
        assert latest is not None
        expected = cp if cut == "reply" else first
        assert latest.checkpoint["id"] == expected["id"]
        assert latest.checkpoint["channel_values"] == expected["channel_values"]
        for tup in reader.list(thread):
            # every visible checkpoint has every one of its 20 channels
            assert len(tup.checkpoint["channel_values"]) == 20


class _Counting(RedisRunner):
    """The saver's runner, counting its round trips."""

    calls = 0

    def execute(self, cmds: list[Any]) -> list[Any]:
        type(self).calls += 1
        return super().execute(cmds)


def test_put_and_get_tuple_are_one_round_trip(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    client = redis.Redis.from_url(url)
    saver = RedisSaver(client, prefix=prefix)
    saver._runner.__class__ = _Counting
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
