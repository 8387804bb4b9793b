"""activity(): one stable idempotency key per call of a step, and the result recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, RetryPolicy, interrupt
from typing_extensions import TypedDict

from langgraph_durable.interrupts import activity
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


class State(TypedDict, total=False):
    receipts: list[str]
    answer: str


def test_retry_and_resume_reuse_the_recorded_results(saga_saver: Any) -> None:
    calls: list[tuple[str, str]] = []

    def send(to: str, *, idempotency_key: str) -> str:
        calls.append((to, idempotency_key))
        return f"sent:{to}"

    send_mail = activity(send, name="send_mail")
    attempts: list[int] = []

    def notify(state: State) -> dict[str, Any]:
        a = send_mail("alice")
        b = send_mail("bob")
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("smtp hiccup after both mails went out")
        answer = interrupt("may I send the invoice?")
        c = send_mail("carol")
        return {"receipts": [a, b, c], "answer": answer}

    builder = StateGraph(State)
    builder.add_node("notify", notify, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0))
    builder.add_edge(START, "notify")
    graph = builder.compile(checkpointer=saga_saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "mail-1"}}

    graph.invoke({"receipts": []}, config)  # retried once, then paused
    assert [to for to, _ in calls] == ["alice", "bob"]
    final = graph.invoke(Command(resume="yes"), config)

    # three executions of the node, one call per mail
    assert len(attempts) == 3
    assert [to for to, _ in calls] == ["alice", "bob", "carol"]
    assert len({k for _, k in calls}) == 3
    assert final["receipts"] == ["sent:alice", "sent:bob", "sent:carol"]

    # another thread, same code: new keys
    graph.invoke({"receipts": []}, {"configurable": {"thread_id": "mail-2"}})
    assert len({k for _, k in calls}) == 5


def test_the_same_node_in_a_later_step_gets_new_keys() -> None:
    keys: list[str] = []

    @activity(name="tick")
    def tick(*, idempotency_key: str) -> int:
        keys.append(idempotency_key)
        return len(keys)

    class Loop(TypedDict, total=False):
        n: int

    def step(state: Loop) -> dict[str, Any]:
        return {"n": tick()}

    builder = StateGraph(Loop)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: "step" if s["n"] < 3 else "__end__")
    graph = builder.compile(checkpointer=InMemorySaver())
    final = graph.invoke({"n": 0}, {"configurable": {"thread_id": "loop"}})
    assert final["n"] == 3
    assert len(set(keys)) == 3


def test_async_activity_records_its_result() -> None:
    calls: list[str] = []

    async def charge(amount: int, idempotency_key: str) -> dict[str, Any]:
        calls.append(idempotency_key)
        return {"amount": amount, "key": idempotency_key}

    pay = activity(charge, name="pay")
    runs: list[int] = []

    async def node(state: State) -> dict[str, Any]:
        receipt = await pay(10)
        runs.append(1)
        if len(runs) == 1:
            raise ConnectionError("lost the response")
        return {"receipts": [receipt["key"]]}

    builder = StateGraph(State)
    builder.add_node("node", node, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0))
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    final = asyncio.run(graph.ainvoke({"receipts": []}, {"configurable": {"thread_id": "a"}}))
    assert calls == final["receipts"]
    assert len(calls) == 1


def test_outside_a_graph_it_refuses() -> None:
    noop = activity(lambda **kw: None, name="noop")
    with pytest.raises(RuntimeError, match="inside a graph node"):
        noop()
