"""Async helpers on a sync saver store decisions, claims and audit entries in the saver.

Our sync ``RedisSaver`` also answers LangGraph's async checkpoint calls (so
``graph.ainvoke`` runs on it), but implements only the sync decision and claim
protocols. ``aapprove``/``areject``/``adecide`` and ``ApprovalSweeper.arun_once``
on such a saver must still record in storage, through the sync protocol, never in
this process's memory: a decision kept in memory is lost with the process and
another process can decide the same approval again. A sync ``PostgresSaver``
leaves LangGraph's async calls unimplemented, yet ``aapprove(saver,
resume=False)`` needs none of them and records the same way: one test runs on
both backends.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    aapprove,
    approve,
    audit_log,
)
from tests._approval_graphs import FakeClock, review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._parts import part_of


def cfg(thread_id: str, clock: Any = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if clock is not None:
        configurable["__durable_clock__"] = clock
    return {"configurable": configurable}


@pytest.fixture
def sync_redis(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, "redis")
    with open_sync("redis", url, options) as saver:
        yield saver, url, options


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_deferred_async_decision_on_a_sync_saver_is_stored(
    request: pytest.FixtureRequest, backend: str
) -> None:
    url, options = saver_url(request, backend)
    with open_sync(backend, url, options) as saver:
        graph = review_graph(saver)
        graph.invoke({"amount": 9}, cfg("t-sync"))
        decision = await aapprove(saver, cfg("t-sync"), by="alice", roles=["ops"], resume=False)
        intr_id = graph.get_state(cfg("t-sync")).interrupts[0].id
        assert (decision.by, decision.approval_id) == ("alice", intr_id)

        # another process (another saver on the same storage) sees the decision
        with open_sync(backend, url, options) as other:
            stored = part_of(other, "decisions").get_decisions(thread_id="t-sync", keys=[intr_id])
            assert stored[intr_id]["by"] == "alice"
            with pytest.raises(AlreadyDecided):
                approve(review_graph(other), cfg("t-sync"), by="bob")
        actions = [(e.actor, e.outcome) for e in audit_log(saver, thread_id="t-sync")]
        assert ("alice", "recorded") in actions
        # and a sweep resumes the run with it
        assert ApprovalSweeper(graph).run_once() == 1
        assert graph.get_state(cfg("t-sync")).values["by"] == "alice"


async def test_an_async_sweep_on_a_sync_saver_claims_in_storage(sync_redis: Any) -> None:
    saver, url, options = sync_redis
    clock = FakeClock()
    graph = review_graph(saver)
    await graph.ainvoke({"amount": 3}, cfg("t-sweep", clock))
    clock.advance(timedelta(hours=1))
    assert await ApprovalSweeper(graph, clock=clock).arun_once() == 1
    # the timeout decision is in storage: another process sees it as decided
    with open_sync("redis", url, options) as other:
        entries = [e for e in audit_log(other, thread_id="t-sweep") if e.actor == "system"]
        assert len(entries) == 1, entries
    assert graph.get_state(cfg("t-sweep")).values["timed_out"] is True
