"""Idle threads expire after ``ttl``; a thread waiting on a deadline stays to deadline + grace."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

import redis
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES, Keys


class State(TypedDict):
    decision: str


def _graph(saver: Any, deadline: datetime | None) -> Any:
    def ask(state: State) -> dict[str, Any]:
        return {"decision": interrupt({WAIT_KEY: wait_marker("approval", deadline), "q": "ok?"})}

    b = StateGraph(State)
    b.add_node("ask", ask)
    b.add_edge(START, "ask")
    b.add_edge("ask", END)
    return b.compile(checkpointer=saver)


def _pttls(raw: redis.Redis, prefix: str, thread_id: str) -> list[int]:
    # only keys that exist (-2 = missing)
    return [t for t in (raw.pttl(k) for k in Keys(prefix).thread(thread_id)) if t != -2]


def test_idle_thread_expires_and_writes_refresh(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=1.5) as saver:
        saver.setup()
        graph = _graph(saver, None)
        config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
        tid = config["configurable"]["thread_id"]
        graph.invoke({"decision": ""}, config)
        written = time.monotonic()
        ttls = _pttls(raw, prefix, tid)
        assert ttls and all(0 < t <= 1500 for t in ttls)
        time.sleep(0.5)
        resumed = time.monotonic()
        graph.invoke(Command(resume="yes"), config)  # a write refreshes every key
        assert saver.get_tuple(config) is not None
        # every key now expires 1.5 s after the resume's write or later; unrefreshed,
        # it would expire by 1.5 s after the first write, 0.5 s before that
        left = _pttls(raw, prefix, tid)
        read = time.monotonic()  # after the reads: read + left is never short of the expiry
        expiries = [read + t / 1000 for t in left]
        assert expiries and all(e >= resumed + 1.45 for e in expiries), (written, resumed, expiries)
        time.sleep(1.8)
        assert saver.get_tuple(config) is None  # idle past the TTL: gone
        assert _pttls(raw, prefix, tid) == []


def test_refresh_on_read_is_opt_in(redis_prefix: tuple[str, str], raw: redis.Redis) -> None:
    url, prefix = redis_prefix
    tid = f"t-{uuid.uuid4()}"
    config: Any = {"configurable": {"thread_id": tid}}
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=60) as saver:
        _graph(saver, None).invoke({"decision": ""}, config)
        for key in Keys(prefix).thread(tid):
            raw.pexpire(key, 5000)
        saver.get_tuple(config)
        assert max(_pttls(raw, prefix, tid)) <= 5000
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=60, refresh_on_read=True) as saver:
        saver.get_tuple(config)
        assert min(_pttls(raw, prefix, tid)) > 50_000


def test_a_pending_deadline_outlives_the_ttl(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    deadline = datetime.now(timezone.utc) + timedelta(seconds=120)
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=2, wait_grace=30) as saver:
        graph = _graph(saver, deadline)
        config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
        tid = config["configurable"]["thread_id"]
        graph.invoke({"decision": ""}, config)
        # inactive is not done: kept until deadline + grace, far beyond the 2 s TTL
        ttls = _pttls(raw, prefix, tid)
        assert ttls and all(140_000 < t <= 150_000 for t in ttls)
        assert len(saver.waits.list_waits(thread_id=tid)) == 1
        time.sleep(2.5)
        assert saver.get_tuple(config) is not None
        # once answered the thread falls back to the plain TTL
        graph.invoke(Command(resume="yes"), config)
        assert saver.waits.list_waits(thread_id=tid) == []
        assert all(0 < t <= 2000 for t in _pttls(raw, prefix, tid))


def test_without_ttl_nothing_expires(sync_saver: RedisSaver, raw: redis.Redis) -> None:
    config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    _graph(sync_saver, None).invoke({"decision": ""}, config)
    ttls = _pttls(raw, sync_saver.prefix, config["configurable"]["thread_id"])
    assert ttls and set(ttls) == {-1}


def test_a_decision_expires_with_its_thread(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    # a decision recorded and never resumed (no later write refreshes anything) must not
    # keep its decision and claim hashes after the thread's checkpoints expire
    from langgraph_durable.interrupts import approve

    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=60) as saver:
        graph = _graph(saver, None)
        config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
        tid = config["configurable"]["thread_id"]
        graph.invoke({"decision": ""}, config)
        approve(saver, config, by="alice", resume=False)
        keys = Keys(prefix).thread(tid)
        dc, cl = keys[THREAD_SUFFIXES.index("dc")], keys[THREAD_SUFFIXES.index("cl")]
        assert raw.exists(dc) == 1 and raw.exists(cl) == 1
        assert 0 < raw.pttl(dc) <= 60_000 and 0 < raw.pttl(cl) <= 60_000
        assert all(t > 0 for t in _pttls(raw, prefix, tid))
