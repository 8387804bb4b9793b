"""A page of timeouts with one thread whose decisions cannot be stored still resumes the rest.

The sweeper records a page's timeout decisions together; when one item of the
batch fails (here a damaged key of one thread), the others were stored by that
batch. Falling back one by one must resume them in the same sweep, not treat
the batch's own decisions as somebody else's and leave them for a lease.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import redis

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES
from langgraph_durable.interrupts import CLOCK_CONFIG_KEY, ApprovalSweeper, audit_log
from tests._approval_graphs import FakeClock, review_graph


def cfg(thread: str, clock: FakeClock | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread}
    if clock is not None:
        conf[CLOCK_CONFIG_KEY] = clock
    return {"configurable": conf}


def test_a_damaged_thread_on_the_page_does_not_hold_back_the_others(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        clock = FakeClock()
        graph = review_graph(saver)
        for t in ("f0", "f1", "f2"):
            graph.invoke({"amount": 1}, cfg(t, clock))
        # f1's decisions hash is damaged: its compare-and-set fails with WRONGTYPE
        raw.set(saver.core.keys.thread("f1")[THREAD_SUFFIXES.index("dc")], "damaged")
        clock.advance(timedelta(minutes=16))
        sweeper = ApprovalSweeper(graph, clock=clock, page_size=10)
        assert sweeper.run_once() == 2
        for t in ("f0", "f2"):
            values = graph.get_state(cfg(t)).values
            assert (values["by"], values["timed_out"], values["done"]) == (
                "system",
                True,
                ["act"],
            ), t
            # stored by the batch, not again one by one: one system entry each
            assert [
                (e.action, e.outcome) for e in audit_log(saver, thread_id=t) if e.actor == "system"
            ] == [("reject", "recorded")], t
