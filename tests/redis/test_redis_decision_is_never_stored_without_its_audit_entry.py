"""Redis: a decision and its audit entry are stored together or not at all.

A Lua script is not rolled back when a command fails halfway: a decision
``HSETNX``-ed before its audit ``XADD`` failed would stay, unaudited, and win
every later attempt. Here every append to the thread's audit stream fails (its
key holds a string), or its chain head cannot be read; the decision must fail
whole, and succeed once the keys can be written.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis

from langgraph_durable.checkpointers import CheckpointerError
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import approve, audit_log, decide, pending_approvals
from tests._approval_graphs import order_graph, orders, review_graph


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def story(saver: RedisSaver, thread: str) -> list[tuple[str, str, str]]:
    return [(e.actor, e.action, e.outcome) for e in audit_log(saver, thread_id=thread)]


def test_an_approval_fails_whole_when_its_entry_cannot_be_written(
    sync_saver: RedisSaver, raw: redis.Redis
) -> None:
    graph = review_graph(sync_saver)
    graph.invoke({"amount": 5}, cfg("t1"))
    (waiting,) = pending_approvals(sync_saver)
    stream = sync_saver.core.keys.audit("t1")[0]
    entries = raw.xrange(stream)
    raw.delete(stream)
    raw.set(stream, "not a stream")

    with pytest.raises(CheckpointerError, match="WRONGTYPE"):
        approve(graph, cfg("t1"), by="alice")
    assert sync_saver.decisions.get_decisions(thread_id="t1", keys=[waiting.approval_id]) == {}
    assert [p.approval_id for p in pending_approvals(sync_saver)] == [waiting.approval_id]

    raw.delete(stream)
    for _, fields in entries:  # the request entry, as it was
        raw.xadd(stream, fields)
    out = approve(graph, cfg("t1"), by="alice")  # not AlreadyDecided: nothing was stored
    assert out["approved"] is True and out["by"] == "alice"
    assert story(sync_saver, "t1") == [
        ("run", "request", "waiting"),
        ("alice", "approve", "recorded"),
    ]


def test_batch_items_fail_whole_when_their_entries_cannot_be_written(
    sync_saver: RedisSaver, raw: redis.Redis
) -> None:
    graph = order_graph(sync_saver)
    graph.invoke({"orders": orders(3)}, cfg("b1"))
    (batch,) = pending_approvals(sync_saver)
    stream = sync_saver.core.keys.audit("b1")[0]
    raw.delete(stream)
    raw.set(stream, "not a stream")

    with pytest.raises(CheckpointerError, match="WRONGTYPE"):
        decide(graph, cfg("b1"), {"o1": True}, by="alice")
    assert (
        sync_saver.decisions.get_decisions(thread_id="b1", keys=[f"{batch.approval_id}/o1"]) == {}
    )

    raw.delete(stream)
    result = decide(graph, cfg("b1"), {"o1": True}, by="alice")
    assert result.applied == ["o1"] and not result.already_decided
    assert story(sync_saver, "b1") == [("alice", "approve", "recorded")]


def test_an_approval_fails_whole_when_its_chain_head_cannot_be_read(
    sync_saver: RedisSaver, raw: redis.Redis
) -> None:
    from langgraph_durable.interrupts import verify_audit

    graph = review_graph(sync_saver)
    graph.invoke({"amount": 5}, cfg("t2"))
    (waiting,) = pending_approvals(sync_saver)
    head = sync_saver.core.keys.audit_head("t2")
    kept = raw.hgetall(head)
    raw.delete(head)
    raw.set(head, "not a hash")

    with pytest.raises(CheckpointerError, match="WRONGTYPE"):
        approve(graph, cfg("t2"), by="alice")
    assert sync_saver.decisions.get_decisions(thread_id="t2", keys=[waiting.approval_id]) == {}
    assert story(sync_saver, "t2") == [("run", "request", "waiting")]

    raw.delete(head)
    raw.hset(head, mapping=kept)
    approve(graph, cfg("t2"), by="alice")
    report = verify_audit(sync_saver, "t2")
    assert report.intact and report.entries == 2, report.summary()
