"""The async store calls on a sync saver claim, count and audit in the saver's storage.

A sync saver implements only the sync wait-claim and audit protocols. Async
code on it (an async sweeper, ``aaudit_log``, ``apurge_audit``,
``averify_audit``) reaches them in a worker thread, never the in-process
fallback: a claim kept in memory does not exclude another process, and an entry
read or purged there is not the stored one. Another saver object on the same
storage stands for another process (its in-process memory is its own).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    aapprove,
    aaudit_log,
    apurge_audit,
    audit_log,
    averify_audit,
)
from langgraph_durable.interrupts._store import Backend
from langgraph_durable.interrupts._store_async import AsyncBackend
from tests._approval_graphs import FakeClock, review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS

LEASE = timedelta(minutes=5)


def cfg(thread_id: str, clock: Any = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if clock is not None:
        configurable["__durable_clock__"] = clock
    return {"configurable": configurable}


def _claim(backend: Backend, clock: FakeClock, owner: str) -> list[str]:
    got = backend.claim_due_waits(now=clock(), owner=owner, lease=LEASE, limit=10)
    return [e.thread_id for e in got]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_async_claim_excludes_another_process_until_released(
    request: pytest.FixtureRequest, backend: str
) -> None:
    url, options = saver_url(request, backend)
    clock = FakeClock()
    with open_sync(backend, url, options) as saver, open_sync(backend, url, options) as other:
        graph = review_graph(saver)
        graph.invoke({"amount": 4}, cfg("t-due", clock))
        clock.advance(timedelta(days=1))
        mine = AsyncBackend(saver)
        claimed = await mine.aclaim_due_waits(now=clock(), owner="a", lease=LEASE, limit=10)
        assert [e.thread_id for e in claimed] == ["t-due"]
        assert await mine.await_counts(now=clock()) == Backend(other).wait_counts(now=clock())
        assert (await mine.await_counts(now=clock()))[:2] == (1, 1)
        # held in storage: the other process finds nothing to claim
        assert _claim(Backend(other), clock, "b") == []
        await mine.arelease_wait_claim(
            thread_id="t-due", interrupt_id=claimed[0].interrupt_id, owner="a"
        )
        assert _claim(Backend(other), clock, "b") == ["t-due"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_async_audit_calls_read_check_and_purge_the_stored_trail(
    request: pytest.FixtureRequest, backend: str
) -> None:
    url, options = saver_url(request, backend)
    with open_sync(backend, url, options) as saver, open_sync(backend, url, options) as other:
        graph = review_graph(saver)
        graph.invoke({"amount": 6}, cfg("t-audit"))
        await aapprove(saver, cfg("t-audit"), by="alice", roles=["ops"], resume=False)
        stored = [(e.actor, e.action, e.outcome) for e in audit_log(other, thread_id="t-audit")]
        assert ("alice", "approve", "recorded") in stored
        read = [
            (e.actor, e.action, e.outcome) for e in await aaudit_log(saver, thread_id="t-audit")
        ]
        assert read == stored
        report = await averify_audit(saver, "t-audit")
        assert report.intact and report.entries == len(stored)
        assert await apurge_audit(saver, thread_id="t-audit") == len(stored)
        assert audit_log(other, thread_id="t-audit") == []
        assert graph.get_state(cfg("t-audit")).values == {}
