"""Through the API: a batch decided item by item (the last one resumes the run), an edit that
runs the edited arguments, a text response; on Postgres and Redis with real graphs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from starlette.testclient import TestClient

from langgraph_durable.interrupts import request_approval
from langgraph_durable.interrupts.service import BearerTokens, create_app
from tests._approval_graphs import order_graph, orders
from tests._approval_savers import open_sync, saver_url
from tests._service_support import ALICE, TOKENS


@pytest.fixture(params=["postgres", "redis"])
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as s:
        yield s


def _client(saver: Any, graph: Any) -> TestClient:
    return TestClient(create_app(saver, graph, authenticate=BearerTokens(TOKENS)))


def test_a_batch_is_decided_item_by_item(saver: Any) -> None:
    graph = order_graph(saver)
    config = {"configurable": {"thread_id": "t-batch"}}
    graph.invoke({"orders": orders(3)}, config)
    with _client(saver, graph) as client:
        (listed,) = client.get("/api/approvals", headers=ALICE).json()["approvals"]
        assert listed["kind"] == "batch"
        assert [i["key"] for i in listed["items"]] == ["o1", "o2", "o3"]
        url = "/api/threads/t-batch/decision"
        missing = client.post(url, json={"decision": "approve"}, headers=ALICE)
        assert missing.status_code == 400
        assert missing.json()["parameter"] == "item"
        unknown = client.post(url, json={"decision": "approve", "item": "o9"}, headers=ALICE)
        assert unknown.status_code == 400
        assert unknown.json()["error"] == "UnknownBatchItem"
        first = client.post(url, json={"decision": "approve", "item": "o1"}, headers=ALICE).json()
        assert first["recorded"] == ["o1"]
        assert first["completed"] is False
        again = client.post(url, json={"decision": "reject", "item": "o1"}, headers=ALICE)
        assert again.status_code == 409
        assert again.json()["decided_by"] == "alice"
        client.post(url, json={"decision": "reject", "item": "o2", "comment": "no"}, headers=ALICE)
        last = client.post(url, json={"decision": "approve", "item": "o3"}, headers=ALICE).json()
        assert last["completed"] is True
    values = graph.get_state(config).values
    assert [o["id"] for o in values["to_ship"]] == ["o1", "o3"]
    assert [o["id"] for o in values["to_refund"]] == ["o2"]


def _flexible_graph(saver: Any) -> Any:
    def review(state: dict[str, Any]) -> dict[str, Any]:
        d = request_approval(
            {"action": "refund", "amount": state["amount"]},
            approvers=["ops"],
            allowed_decisions=["approve", "reject", "edit", "respond"],
        )
        return {"outcome": [d.type, d.edited, d.response, d.by]}

    builder: StateGraph[Any] = StateGraph(dict)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


def test_an_edit_runs_the_edited_arguments_and_a_response_reaches_the_agent(saver: Any) -> None:
    graph = _flexible_graph(saver)
    for t in ("t-edit", "t-respond"):
        graph.invoke({"amount": 500}, {"configurable": {"thread_id": t}})
    edited = {"action": "refund", "amount": 50}
    with _client(saver, graph) as client:
        no_args = client.post(
            "/api/threads/t-edit/decision", json={"decision": "edit"}, headers=ALICE
        )
        assert no_args.json()["parameter"] == "arguments"
        done = client.post(
            "/api/threads/t-edit/decision",
            json={"decision": "edit", "arguments": edited, "comment": "half"},
            headers=ALICE,
        )
        assert done.status_code == 200, done.text
        answered = client.post(
            "/api/threads/t-respond/decision",
            json={"decision": "respond", "text": "ask for a receipt first"},
            headers=ALICE,
        )
        assert answered.status_code == 200, answered.text
    outcome = graph.get_state({"configurable": {"thread_id": "t-edit"}}).values["outcome"]
    assert outcome == ["edit", edited, None, "alice"]
    reply = graph.get_state({"configurable": {"thread_id": "t-respond"}}).values["outcome"]
    assert reply == ["respond", None, "ask for a receipt first", "alice"]
