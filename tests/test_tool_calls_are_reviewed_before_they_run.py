"""review_tool_call: approve runs the tool, edit runs it with the approver's arguments,
reject and respond answer the model without running it (HumanInTheLoopMiddleware's rules)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from langgraph_durable.interrupts import areview_tool_call, edit, review_tool_call
from tests import _approval_savers
from tests._resume_graphs import as_user

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver

SENT: list[dict[str, Any]] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append({"to": to, "body": body})
    return f"sent to {to}"


class AgentState(TypedDict, total=False):
    messages: Annotated[list[Any], operator.add]


CALL = {"name": "send_email", "args": {"to": "bob", "body": "hi"}, "id": "call-1"}


def agent_graph(saver: Any, use_async: bool = False) -> Any:
    def model(state: AgentState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", tool_calls=[CALL])]}

    def tools(state: AgentState) -> dict[str, Any]:
        [call] = state["messages"][-1].tool_calls
        return {"messages": [review_tool_call(send_email, call, approvers="ops")]}

    async def atools(state: AgentState) -> dict[str, Any]:
        [call] = state["messages"][-1].tool_calls
        return {"messages": [await areview_tool_call(send_email, call, approvers="ops")]}

    builder = StateGraph(AgentState)
    builder.add_node("model", model)
    builder.add_node("tools", atools if use_async else tools)
    builder.add_edge(START, "model")
    builder.add_edge("model", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


def _last(out: dict[str, Any]) -> ToolMessage:
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.tool_call_id == "call-1"
    return message


@pytest.fixture(autouse=True)
def _fresh() -> None:
    SENT.clear()


def test_the_request_is_the_tool_call(approval_saver: Any) -> None:
    graph = agent_graph(approval_saver)
    out = graph.invoke({"messages": []}, {"configurable": {"thread_id": "a1"}})
    [action] = out["__interrupt__"][0].value["action_requests"]
    assert (action["name"], action["args"]) == ("send_email", CALL["args"])


@pytest.mark.parametrize(
    ("resume", "sent", "status", "content"),
    [
        ({"decisions": [{"type": "approve"}]}, [{"to": "bob", "body": "hi"}], "success", "sent"),
        (
            {
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {"name": "send_email", "args": {"to": "al", "body": "x"}},
                    }
                ]
            },
            [{"to": "al", "body": "x"}],
            "success",
            "sent to al",
        ),
        (
            {"decisions": [{"type": "reject", "message": "not bob"}]},
            [],
            "error",
            "with reason: not bob",
        ),
        ({"decisions": [{"type": "respond", "message": "bob is away"}]}, [], "success", "away"),
    ],
    ids=["approve", "edit", "reject", "respond"],
)
def test_each_decision_does_what_the_middleware_does(
    approval_saver: Any, resume: Any, sent: list[Any], status: str, content: str
) -> None:
    graph = agent_graph(approval_saver)
    graph.invoke({"messages": []}, {"configurable": {"thread_id": "a1"}})
    message = _last(graph.invoke(Command(resume=resume), as_user("a1", "ops")))
    assert sent == SENT
    assert message.status == status and content in str(message.content)


def test_an_operator_edit_runs_the_edited_call(approval_saver: Any) -> None:
    graph = agent_graph(approval_saver)
    graph.invoke({"messages": []}, {"configurable": {"thread_id": "a1"}})
    out = edit(
        graph, {"configurable": {"thread_id": "a1"}}, by="ops", args={"to": "c", "body": "y"}
    )
    assert SENT == [{"to": "c", "body": "y"}]
    assert _last(out).content == "sent to c"


async def test_async_nodes_review_with_areview_tool_call(async_approval_saver: Any) -> None:
    graph = agent_graph(async_approval_saver, use_async=True)
    await graph.ainvoke({"messages": []}, {"configurable": {"thread_id": "a1"}})
    out = await graph.ainvoke(Command(resume=True), as_user("a1", "ops"))
    assert _last(out).content == "sent to bob" and len(SENT) == 1
