"""An approval rejected with on_reject="compensate" undoes the committed steps."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_durable.interrupts import add_compensation, reject, request_approval
from tests import _saga_graphs as g
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


def test_rejection_runs_the_undos_with_the_reason(saga_saver: Any) -> None:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    approved: list[bool] = []

    def review(state: g.OrderState) -> dict[str, Any]:
        decision = request_approval({"refund": state["charge_id"]}, on_reject="compensate")
        approved.append(decision.approved)
        return {}

    graph = add_compensation(g.reviewed_order(review)).compile(checkpointer=saga_saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "order-r"}}

    graph.invoke({"order_id": "o9", "amount": 3}, config)
    assert graph.get_state(config).next == ("review",)
    reject(graph, config, by="carol", comment="customer cancelled")

    final = graph.get_state(config).values
    assert approved == []  # the node never got a decision back: it compensated
    assert "ship" not in g.LEDGER.call_names()
    assert g.LEDGER.call_names()[-2:] == ["refund", "release"]
    assert final["saga"]["status"] == "compensated"
    assert final["saga"]["reason"] == "approval rejected by carol: customer cancelled"
    assert final["saga"]["failure"]["node"] == "review"
