"""Through a real Agent Server (``langgraph dev`` on our Postgres saver) and ``langgraph-sdk``:
an approval's interrupt is LangChain's HITL request, and an SDK resume in HITL form is the
decision, with its decider from the run's config; a resume naming nobody fails the run and the
approval keeps waiting."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import get_client

from tests._servers import url_with
from tests.test_agent_server_runs_graphs_on_our_savers import _agent_server

AGENT = """
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import request_approval


class State(TypedDict, total=False):
    amount: int
    decision: dict[str, Any]


def review(state: State) -> dict:
    d = request_approval(
        {"action": "refund", "amount": state["amount"]},
        approvers=["ops"],
        allowed_decisions=["approve", "reject", "edit", "respond"],
        description="Refund the customer",
    )
    return {"decision": d.model_dump(mode="json")}


builder = StateGraph(State)
builder.add_node("review", review)
builder.add_edge(START, "review")
builder.add_edge("review", END)
graph = builder.compile()
"""

EDIT = {
    "decisions": [
        {
            "type": "edit",
            "edited_action": {"name": "refund", "args": {"action": "refund", "amount": 9}},
        }
    ]
}


async def _answer(url: str) -> None:
    client = get_client(url=url)
    tid = (await client.threads.create())["thread_id"]
    paused: Any = await client.runs.wait(tid, "agent", input={"amount": 30})
    [intr] = paused["__interrupt__"]
    assert intr["value"]["action_requests"] == [
        {
            "name": "refund",
            "args": {"action": "refund", "amount": 30},
            "description": "Refund the customer",
        }
    ]
    assert intr["value"]["review_configs"][0]["allowed_decisions"] == [
        "approve",
        "reject",
        "edit",
        "respond",
    ]
    # nobody named: the run fails with the refusal, the approval still waits
    refused: Any = await client.runs.wait(tid, "agent", command={"resume": True}, raise_error=False)
    assert refused["__error__"]["error"] == "NotAuthorized"  # the server hides the message
    assert (await client.threads.get_state(tid))["next"] == ["review"]
    done: Any = await client.runs.wait(
        tid, "agent", command={"resume": EDIT}, config={"configurable": {"durable_decider": "ops"}}
    )
    decision = done["decision"]
    assert (decision["type"], decision["by"], decision["via"]) == ("edit", "ops", "resume")
    assert decision["edited"] == {"action": "refund", "amount": 9}
    assert (await client.threads.get_state(tid))["next"] == []


@pytest.mark.timeout(180)
async def test_an_sdk_resume_in_hitl_form_decides(pg_schema: Any, tmp_path: Any) -> None:
    url, schema = pg_schema
    env = {"LANGGRAPH_DURABLE_POSTGRES_URL": url_with(url, "schema", schema)}
    with _agent_server(tmp_path, "postgres", env, agent=AGENT) as server:
        await _answer(server)
