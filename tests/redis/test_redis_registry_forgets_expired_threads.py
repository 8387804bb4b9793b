"""Threads whose keys expired through the TTL leave the thread registry and the wait shards.

``list(None)`` and ``reconcile_waits`` read the registry; without the expiry hints
they would call a script for every thread that ever lived. A thread kept by a
deadline stays; a thread written again after expiring is listed again; a drop
never removes a thread a writer registered after the reader looked.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

import pytest
import redis
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from redis.cluster import RedisCluster

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._keys import Keys, shard_of


class State(TypedDict):
    decision: str


def _graph(saver: Any, node: Any) -> Any:
    b = StateGraph(State)
    b.add_node("n", node)
    b.add_edge(START, "n")
    b.add_edge("n", END)
    return b.compile(checkpointer=saver)


def _plain(state: State) -> dict[str, Any]:
    return {"decision": "done"}


def _wait(deadline: datetime | None) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"decision": interrupt({WAIT_KEY: wait_marker("approval", deadline), "q": "?"})}

    return node


def _client(url: str, cluster: bool) -> Any:
    return RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)


@pytest.mark.parametrize(
    "where", ["redis_prefix", pytest.param("cluster_prefix", marks=pytest.mark.cluster)]
)
def test_expired_threads_leave_the_registry(where: str, request: pytest.FixtureRequest) -> None:
    url, prefix = request.getfixturevalue(where)
    raw = _client(url, where == "cluster_prefix")
    keys = Keys(prefix)
    run = uuid.uuid4().hex[:8]
    gone, open_ended, waiting = f"gone-{run}", f"open-{run}", f"waiting-{run}"
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix, ttl=2.0, wait_grace=60) as saver:
            saver.setup()
            _graph(saver, _plain).invoke({"decision": ""}, {"configurable": {"thread_id": gone}})
            # a wait without a deadline does not hold the thread: it expires too
            _graph(saver, _wait(None)).invoke(
                {"decision": ""}, {"configurable": {"thread_id": open_ended}}
            )
            far = datetime.now(timezone.utc) + timedelta(minutes=5)
            _graph(saver, _wait(far)).invoke(
                {"decision": ""}, {"configurable": {"thread_id": waiting}}
            )
            assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {
                gone,
                open_ended,
                waiting,
            }
            assert {w.thread_id for w in saver.waits.list_waits()} == {open_ended, waiting}

            # (a TTL long enough that the three writes and the listings above fit in it
            # on a loaded machine, or the first thread could be gone before it is listed)
            time.sleep(3.2)  # past the TTL and the registry's hint (1.5 TTL)
            assert saver.get_tuple({"configurable": {"thread_id": gone}}) is None
            assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {waiting}
            registered = set().union(*(raw.smembers(k) for k in keys.registries()))
            assert registered == {waiting.encode()}
            # the kept thread's hint moved on to its real expiry (deadline + grace)
            hint = raw.zscore(keys.registry_expiry(shard_of(waiting)), waiting)
            assert hint is not None and hint > (far + timedelta(seconds=50)).timestamp() * 1000
            # its wait stays listed; the expired thread's entry leaves the wait shards
            assert [w.thread_id for w in saver.waits.list_waits()] == [waiting]
            shard_members = set().union(*(raw.zrange(k, 0, -1) for k in keys.wait_shards()))
            assert {m.split(b"\x00")[0] for m in shard_members} == {waiting.encode()}
            assert saver.waits.reconcile_waits() == 0

            # written again after expiring: registered and listed again
            _graph(saver, _plain).invoke({"decision": ""}, {"configurable": {"thread_id": gone}})
            assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {
                gone,
                waiting,
            }
    finally:
        raw.close()


def test_a_drop_spares_a_thread_registered_after_the_check(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    keys = Keys(redis_prefix[1])
    shard = 3
    registry, hints = keys.registry(shard), keys.registry_expiry(shard)
    checked_at = int(time.time() * 1000)
    raw.sadd(registry, "expired", "rewritten", "unhinted")
    raw.zadd(hints, {"expired": checked_at - 10, "rewritten": checked_at + 90_000})
    dropped = raw.eval(
        S.UNREGISTER.source, 2, registry, hints, checked_at, "expired", "rewritten", "unhinted"
    )
    assert dropped == [b"expired"]
    assert raw.smembers(registry) == {b"rewritten", b"unhinted"}
    assert raw.zrange(hints, 0, -1) == [b"rewritten"]
