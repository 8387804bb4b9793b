"""The wait index finds waits across threads (sharded), drops stale ones, and survives copies."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

import pytest
import redis
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers import WAIT_KEY, WaitIndex, wait_marker
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import SHARDS, Keys

SOON = datetime.now(timezone.utc) + timedelta(hours=1)


class State(TypedDict):
    decision: str


def _graph(saver: Any, deadline: datetime | None, approvers: list[str]) -> Any:
    def ask(state: State) -> dict[str, Any]:
        marker = wait_marker("approval", deadline, approvers=approvers)
        return {"decision": interrupt({WAIT_KEY: marker, "q": "ok?"})}

    b = StateGraph(State)
    b.add_node("ask", ask)
    b.add_edge(START, "ask")
    b.add_edge("ask", END)
    return b.compile(checkpointer=saver)


def _shard_members(raw: Any, prefix: str) -> list[bytes]:
    keys = Keys(prefix)
    return [m for i in range(SHARDS) for m in raw.zrange(keys.wait_shard(i), 0, -1)]


def _check(saver: RedisSaver, raw: Any) -> None:
    assert isinstance(saver.waits, WaitIndex)
    threads = {}
    for i in range(8):
        tid = f"w{i}-{uuid.uuid4().hex[:6]}"
        deadline = None if i == 7 else SOON + timedelta(minutes=i)
        _graph(saver, deadline, ["ops"] if i % 2 else []).invoke(
            {"decision": ""}, {"configurable": {"thread_id": tid}}
        )
        threads[i] = tid
    waits = saver.waits.list_waits()
    # every thread, oldest deadline first, the one without a deadline last
    assert [w.thread_id for w in waits] == [threads[i] for i in range(8)]
    assert waits[-1].info.deadline is None
    assert [w.thread_id for w in saver.waits.list_waits(limit=2)] == [threads[0], threads[1]]
    # approver "ops" sees waits routed to ops and the open ones (no approvers)
    assert len(saver.waits.list_waits(approver="ops")) == 8
    assert {w.thread_id for w in saver.waits.list_waits(approver="finance")} == {
        threads[i] for i in range(0, 8, 2)
    }
    assert len(_shard_members(raw, saver.prefix)) == 8
    # answering one and deleting another drop them from the shards too
    _graph(saver, None, []).invoke(Command(resume="y"), {"configurable": {"thread_id": threads[0]}})
    saver.delete_thread(threads[1])
    assert len(_shard_members(raw, saver.prefix)) == 6
    assert [w.thread_id for w in saver.waits.list_waits()][:1] == [threads[2]]
    # a copied thread waits too, under its own id
    saver.copy_thread(threads[3], "copy-" + threads[3])
    (copied,) = saver.waits.list_waits(thread_id="copy-" + threads[3])
    assert copied.thread_id == "copy-" + threads[3]
    assert len(saver.waits.list_waits()) == 7


def test_waits_across_threads_single_node(sync_saver: RedisSaver, raw: redis.Redis) -> None:
    _check(sync_saver, raw)


@pytest.mark.cluster
def test_waits_across_threads_on_a_cluster(cluster_prefix: tuple[str, str]) -> None:
    from redis.cluster import RedisCluster

    url, prefix = cluster_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        raw = RedisCluster.from_url(url)
        try:
            _check(saver, raw)
        finally:
            raw.close()


def test_a_shard_entry_of_an_expired_thread_is_skipped(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=1, wait_grace=0.001) as saver:
        past = datetime.now(timezone.utc) - timedelta(hours=1)
        tid = f"gone-{uuid.uuid4().hex[:6]}"
        _graph(saver, past, []).invoke({"decision": ""}, {"configurable": {"thread_id": tid}})
        assert len(saver.waits.list_waits()) == 1
        time.sleep(1.3)  # the deadline is long past: the plain TTL applies and the thread goes
        assert len(_shard_members(raw, prefix)) == 1  # the shard still names it...
        assert saver.waits.list_waits() == []  # ...but the thread is the truth


def test_delete_for_runs_spans_threads(sync_saver: RedisSaver) -> None:
    saver = sync_saver
    graph = _graph(saver, SOON, [])
    configs: list[Any] = [
        {"configurable": {"thread_id": f"r{i}-{uuid.uuid4().hex[:6]}"}} for i in range(3)
    ]
    run = str(uuid.uuid4())

    def with_run(c: Any, run_id: str) -> Any:
        # what the LangGraph server does: the run id reaches checkpoint metadata
        return {"configurable": {**c["configurable"]}, "metadata": {"run_id": run_id}}

    for c in configs[:2]:  # one run id on two threads
        graph.invoke({"decision": ""}, with_run(c, run))
    graph.invoke({"decision": ""}, with_run(configs[2], str(uuid.uuid4())))
    assert {t.metadata["run_id"] for c in configs[:2] for t in saver.list(c)} == {run}
    saver.delete_for_runs([run])
    for c in configs[:2]:
        assert list(saver.list(c)) == []
        assert saver.waits.list_waits(thread_id=c["configurable"]["thread_id"]) == []
    assert len(list(saver.list(configs[2]))) > 0
    assert [w.thread_id for w in saver.waits.list_waits()] == [
        configs[2]["configurable"]["thread_id"]
    ]


def test_reconcile_restores_a_lost_shard_entry(sync_saver: RedisSaver, raw: redis.Redis) -> None:
    tid = f"lost-{uuid.uuid4().hex[:6]}"
    _graph(sync_saver, SOON, []).invoke({"decision": ""}, {"configurable": {"thread_id": tid}})
    (member,) = _shard_members(raw, sync_saver.prefix)
    score = [raw.zscore(k, member) for k in Keys(sync_saver.prefix).wait_shards()]
    # a crash between the thread write and the shard write
    for key in Keys(sync_saver.prefix).wait_shards():
        raw.zrem(key, member)
    assert sync_saver.waits.list_waits() == []
    assert sync_saver.waits.list_waits(thread_id=tid) != []  # the thread still has it
    assert sync_saver.waits.reconcile_waits() == 1
    assert [w.thread_id for w in sync_saver.waits.list_waits()] == [tid]
    assert [raw.zscore(k, member) for k in Keys(sync_saver.prefix).wait_shards()] == score
    assert sync_saver.waits.reconcile_waits() == 0  # idempotent
