"""Partial-batch approvals: per-item exactly-once decisions, timeouts, stale payloads."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    UnknownBatchItem,
    adecide,
    decide,
    pending_approvals,
)
from tests import _approval_savers
from tests._approval_graphs import T0, FakeClock, cfg, order_graph, orders

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def test_decisions_hours_apart_complete_the_batch(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders()}, cfg("b1", clock))
    first = decide(graph, cfg("b1"), {"o1": True, "o2": True, "o3": False}, by="alice", clock=clock)
    assert first.applied == ["o1", "o2", "o3"] and not first.completed
    [item] = pending_approvals(approval_saver)
    assert item.kind == "batch" and len(item.items) == 5
    assert [(i.key, i.decided, i.by) for i in item.items if i.decided] == [
        ("o1", True, "alice"),
        ("o2", True, "alice"),
        ("o3", True, "alice"),
    ]
    clock.advance(timedelta(hours=2))
    # a fresh graph object: nothing in the second "process" but the saver
    second = decide(
        order_graph(approval_saver), cfg("b1"), {"o4": True, "o5": False}, by="bob", clock=clock
    )
    assert second.completed
    values = second.result
    assert [o["id"] for o in values["to_ship"]] == ["o1", "o2", "o4"]
    assert [o["id"] for o in values["to_refund"]] == ["o3", "o5"]
    assert values["deciders"]["o1"][:2] == ["alice", T0.isoformat()]
    assert values["deciders"]["o5"][:2] == ["bob", (T0 + timedelta(hours=2)).isoformat()]
    assert values["timed_out"] == []
    assert pending_approvals(approval_saver) == []


def test_deadline_rejects_the_open_items(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders()}, cfg("b1", clock))
    decide(graph, cfg("b1"), {"o1": True, "o2": True, "o3": True}, by="alice", clock=clock)
    clock.advance(timedelta(hours=4))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    values = graph.get_state(cfg("b1")).values
    assert [o["id"] for o in values["to_ship"]] == ["o1", "o2", "o3"]
    assert [o["id"] for o in values["to_refund"]] == ["o4", "o5"]
    assert sorted(values["timed_out"]) == ["o4", "o5"]
    assert values["deciders"]["o4"][0] == "system"
    with pytest.raises(AlreadyDecided) as caught:
        decide(graph, cfg("b1"), {"o4": True}, by="late", clock=clock)
    assert caught.value.timed_out


def test_unknown_key_records_nothing(approval_saver: Any) -> None:
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders()}, cfg("b1"))
    with pytest.raises(UnknownBatchItem) as caught:
        decide(graph, cfg("b1"), {"o1": True, "nope": False}, by="alice")
    assert isinstance(caught.value, KeyError) and caught.value.keys == ["nope"]
    assert caught.value.thread_id == "b1" and "'b1'" in str(caught.value)
    [item] = pending_approvals(approval_saver)
    assert not any(i.decided for i in item.items)


def test_overlapping_concurrent_decisions_decide_each_item_once(approval_saver: Any) -> None:
    n = 40
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(n)}, cfg("b1"))
    barrier = threading.Barrier(8)
    results: list[Any] = [None] * 8

    def worker(w: int) -> None:
        # worker w decides a window of 10 items starting at 5*w: windows overlap
        keys = [f"o{(5 * w + j) % n + 1}" for j in range(10)]
        barrier.wait()
        try:
            results[w] = decide(graph, cfg("b1"), dict.fromkeys(keys, w % 2 == 0), by=f"w{w}")
        except AlreadyDecided as exc:
            results[w] = exc

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    applied = Counter(k for r in results if not isinstance(r, Exception) for k in r.applied)
    assert set(applied) == {f"o{i}" for i in range(1, n + 1)}
    assert set(applied.values()) == {1}
    assert sum(1 for r in results if not isinstance(r, Exception) and r.completed) == 1
    values = graph.get_state(cfg("b1")).values
    winners = {
        k: f"w{w}" for w, r in enumerate(results) if not isinstance(r, Exception) for k in r.applied
    }
    assert {k: v[0] for k, v in values["deciders"].items()} == winners


def test_a_changed_price_is_asked_again(approval_saver: Any) -> None:
    prices: dict[str, int] = {}
    graph = order_graph(approval_saver, prices)
    graph.invoke({"orders": orders(3)}, cfg("b1"))
    decide(graph, cfg("b1"), {"o1": True, "o2": True}, by="alice")
    prices["o2"] = 999  # the price changed during the wait
    done = decide(graph, cfg("b1"), {"o3": False}, by="bob")
    assert done.completed and "__interrupt__" in done.result
    [item] = pending_approvals(approval_saver)
    assert [(i.key, i.item["price"]) for i in item.items] == [("o2", 999)]
    final = decide(graph, cfg("b1"), {"o2": False}, by="carol")
    values = final.result
    assert [o["id"] for o in values["to_ship"]] == ["o1"]
    assert [(o["id"], o["price"]) for o in values["to_refund"]] == [("o2", 999), ("o3", 30)]
    assert values["deciders"]["o2"][0] == "carol"
    assert values["deciders"]["o2"][2] == "1"  # the stale round is kept in the history


async def test_async_decide(async_approval_saver: Any) -> None:
    graph = order_graph(async_approval_saver)
    await graph.ainvoke({"orders": orders(2)}, cfg("b1"))
    res = await adecide(graph, cfg("b1"), {"o1": True, "o2": True}, by="alice")
    assert res.completed and len(res.result["to_ship"]) == 2
