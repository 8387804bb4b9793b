"""activity.call (called, then cached), compensation.undo (failures counted), migration.upgrade."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_durable.interrupts import activity
from langgraph_durable.migrations import upgrade_all
from tests import _saga_graphs as g
from tests._backends import BACKENDS
from tests._bulk_seed import picky
from tests._migration_backends import backend_from_fixture, seed_bulk
from tests._otel_support import Telemetry
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


class State(TypedDict, total=False):
    receipt: str
    answer: str


def test_an_activity_is_called_once_then_read_back(otel: Telemetry, saga_saver: Any) -> None:
    sent: list[str] = []

    def send(to: str) -> str:
        sent.append(to)
        return f"sent:{to}"

    send_mail = activity(send, name="send_mail")

    def notify(state: State) -> dict[str, Any]:
        receipt = send_mail("alice")
        return {"receipt": receipt, "answer": interrupt("invoice too?")}

    builder = StateGraph(State)
    builder.add_node("notify", notify)
    builder.add_edge(START, "notify")
    graph = builder.compile(checkpointer=saga_saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "mail-1"}}
    graph.invoke({}, config)
    graph.invoke(Command(resume="yes"), config)  # the node runs again: the result is read
    assert sent == ["alice"]
    first, second = otel.spans("activity.call")
    assert [
        first.attributes["langgraph_durable.activity.cached"],
        second.attributes["langgraph_durable.activity.cached"],
    ] == [False, True]
    assert first.attributes["langgraph_durable.activity.name"] == "send_mail"
    key = first.attributes["langgraph_durable.idempotency_key"]
    assert key and second.attributes["langgraph_durable.idempotency_key"] == key


def test_undos_are_spans_and_failures_are_counted(otel: Telemetry, saga_saver: Any) -> None:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    g.FAILING_UNDOS.add("refund")
    try:
        graph = g.build_order_graph().compile(checkpointer=saga_saver)
        graph.invoke({"order_id": "o1", "amount": 42}, {"configurable": {"thread_id": "order-1"}})
    finally:
        g.FAILING_UNDOS.clear()
    undos = otel.spans("compensation.undo")
    assert [s.attributes["langgraph_durable.undo"] for s in undos][:1] == [
        "tests._saga_graphs.refund"
    ]
    refund = undos[0]
    assert refund.attributes["langgraph.thread_id"] == "order-1"
    failed = [e for e in refund.events if e.name == "compensation.attempt_failed"]
    assert failed and failed[0].attributes["exception.type"] == "ConnectionError"
    points = otel.collect()["langgraph_durable.compensation.failures"]
    assert sum(p.value for p in points) == len(failed)
    assert all(p.attributes["undo"] == "tests._saga_graphs.refund" for p in points)


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_upgrade_batch_is_a_span(
    otel: Telemetry, backend: str, request: pytest.FixtureRequest
) -> None:
    b = backend_from_fixture(backend, request)
    seed_bulk(b, 6)
    otel.exporter.clear()
    with b.open(picky) as saver:
        result = upgrade_all(saver, picky, batch_size=4)
    assert result.upgraded == 6
    batches = otel.spans("migration.upgrade")
    assert len(batches) >= 2
    system = "postgresql" if backend == "postgres" else "redis"
    assert all(s.attributes["db.system"] == system for s in batches)
    assert all(s.attributes["langgraph_durable.migration.batch_size"] == 4 for s in batches)
    assert sum(s.attributes["langgraph_durable.rows"] for s in batches) == 6
