"""The service's inbox pages through what waits: every approval and batch the caller may
decide exactly once across the pages, soonest deadline first, a batch with its items; a
request reads a bounded number of waits however many there are. Postgres and Redis."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts import _service_ops
from tests._approval_graphs import order_graph, orders, review_graph
from tests._service_support import ALICE, Served, served


@pytest.fixture(params=["postgres", "redis"])
def svc(request: pytest.FixtureRequest) -> Iterator[tuple[Served, TestClient]]:
    with served(request, request.param) as s, TestClient(s.app) as client:
        yield s, client


def _pages(client: TestClient, limit: int) -> list[list[dict[str, Any]]]:
    pages, cursor = [], ""
    while True:
        got = client.get(f"/api/approvals?limit={limit}&cursor={cursor}", headers=ALICE)
        assert got.status_code == 200, got.text
        pages.append(got.json()["approvals"])
        cursor = got.json()["next_cursor"]
        if cursor is None:
            return pages


def _waiting(s: Served) -> None:
    # ops' refunds with deadlines 1..5 hours away, two batches (open to anyone, 4 h),
    # and a refund for finance alone, which alice may not decide
    for hours in (5, 1, 3, 2, 4):
        graph = review_graph(s.saver, timeout=timedelta(hours=hours), open_to_all=False)
        graph.invoke({"amount": hours}, {"configurable": {"thread_id": f"refund-{hours}h"}})
    for n in (1, 2):
        order_graph(s.saver).invoke(
            {"orders": orders(n + 1)}, {"configurable": {"thread_id": f"batch-{n}"}}
        )
    finance = review_graph(s.saver, approvers=("finance",), open_to_all=False)
    finance.invoke({"amount": 9}, {"configurable": {"thread_id": "finance-only"}})


def test_every_wait_the_caller_may_decide_is_on_exactly_one_page(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    _waiting(s)
    everything = client.get("/api/approvals?limit=500", headers=ALICE).json()["approvals"]
    order = [a["thread_id"] for a in everything]
    # by deadline: the batches' 4 hours run from after refund-4h was asked
    hours = ["refund-1h", "refund-2h", "refund-3h", "refund-4h"]
    assert order == [*hours, "batch-1", "batch-2", "refund-5h"]
    for limit in (1, 2, 3, 7):
        pages = _pages(client, limit)
        assert all(len(p) <= limit for p in pages)
        assert [a["thread_id"] for p in pages for a in p] == order, limit
    batch = next(a for a in everything if a["thread_id"] == "batch-2")
    assert [i["key"] for i in batch["items"]] == ["o1", "o2", "o3"]


def test_a_request_considers_a_bounded_number_of_waits(
    svc: tuple[Served, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    s, client = svc
    _waiting(s)
    monkeypatch.setattr(_service_ops, "INBOX_SCAN", 2)
    listed = [
        a["thread_id"] for a in client.get("/api/approvals", headers=ALICE).json()["approvals"]
    ]
    # the two soonest approvals (finance's, 15 minutes away, which alice may not decide,
    # and refund-1h) and the two soonest batches
    assert listed == ["refund-1h", "batch-1", "batch-2"]
