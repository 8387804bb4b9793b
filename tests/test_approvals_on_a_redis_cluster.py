"""On Redis Cluster: decisions, claims and the sweeper work across slots."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    AlreadyDecided,
    ApprovalSweeper,
    approval_health,
    approve,
    audit_log,
    pending_approvals,
    purge_audit,
)
from tests._approval_graphs import FakeClock, review_graph, two_level_escalation


def sweep_concurrently(graph: Any, clock: FakeClock, n: int) -> list[int]:
    sweepers = [ApprovalSweeper(graph, clock=clock, page_size=4) for _ in range(n)]
    done = [0] * n

    def run(k: int) -> None:
        done[k] = sweepers[k].run_once()

    workers = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return done


@pytest.mark.cluster
def test_approvals_on_a_cluster(cluster_prefix: tuple[str, str]) -> None:
    url, prefix = cluster_prefix
    clock = FakeClock()
    effects: Counter[int] = Counter()
    lock = threading.Lock()

    def count(state: dict[str, Any]) -> None:
        with lock:
            effects[state["amount"]] += 1

    with RedisSaver.from_conn_string(url, prefix=prefix, cluster=True) as saver:
        saver.setup()
        graph = review_graph(saver, on_timeout=two_level_escalation(), after=count)
        for i in range(30):  # threads land on many slots
            graph.invoke(
                {"amount": i}, {"configurable": {"thread_id": f"c{i}", CLOCK_CONFIG_KEY: clock}}
            )
        assert len(pending_approvals(saver, approver="ops")) == 30
        approve(graph, {"configurable": {"thread_id": "c0"}}, by="alice", clock=clock)
        with pytest.raises(AlreadyDecided):
            approve(graph, {"configurable": {"thread_id": "c0"}}, by="bob", clock=clock)
        for step in (timedelta(minutes=15), timedelta(hours=1), timedelta(hours=1)):
            clock.advance(step)
            assert sum(sweep_concurrently(graph, clock, 3)) == 29
        assert pending_approvals(saver) == []
        assert approval_health(saver, clock=clock).waiting == 0
        assert effects == Counter(range(30))
        # the audit streams live in each thread's slot: every script ran on the cluster
        trail = [(e.actor, e.action, e.outcome) for e in audit_log(saver, thread_id="c0")]
        assert trail == [
            ("run", "request", "waiting"),
            ("alice", "approve", "recorded"),
            ("bob", "approve", "already_decided"),
        ]
        swept = [(e.actor, e.action) for e in audit_log(saver, thread_id="c1")]
        assert swept == [
            ("run", "request"),
            ("system", "escalate"),
            ("run", "request"),
            ("system", "escalate"),
            ("run", "request"),
            ("system", "reject"),
        ]
        assert purge_audit(saver, thread_id="c1") == 6
        assert audit_log(saver, thread_id="c1") == []
