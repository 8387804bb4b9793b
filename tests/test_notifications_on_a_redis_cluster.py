"""On Redis Cluster: every thread's notifications are stored in its slot and all are delivered."""

from __future__ import annotations

from collections import Counter

import pytest

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import NotificationDispatcher, WebhookTarget, approve
from tests._approval_graphs import review_graph
from tests._webhook_receiver import Receiver


@pytest.mark.cluster
def test_notifications_of_threads_on_many_slots_all_arrive(
    cluster_prefix: tuple[str, str],
) -> None:
    url, prefix = cluster_prefix
    receiver = Receiver().start()
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix, cluster=True) as saver:
            saver.setup()
            graph = review_graph(saver)
            for i in range(20):  # threads land on many slots
                graph.invoke({"amount": i}, {"configurable": {"thread_id": f"n{i}"}})
            for i in range(0, 20, 2):
                approve(graph, {"configurable": {"thread_id": f"n{i}"}}, by="alice")
            dispatcher = NotificationDispatcher(
                saver, [WebhookTarget(receiver.url, secret="k")], batch=7
            )
            for _ in range(10):
                dispatcher.run_once()
            assert saver.outbox.notification_counts().pending == 0
    finally:
        receiver.stop()
    kinds = Counter(r.event["kind"] for r in receiver.unique().values())
    assert kinds == Counter({"requested": 20, "decided": 10})
    assert len(receiver.requests) == 30 and receiver.all_signed("k")
