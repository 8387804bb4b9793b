"""The wait index lists marked interrupts until the thread moves on or is deleted."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from tests._parts import method_of

DEADLINE = datetime(2030, 1, 1, tzinfo=timezone.utc)


class State(TypedDict):
    decision: str


def _approve(state: State) -> dict[str, Any]:
    marker = wait_marker("approval", DEADLINE, approvers=["ops"], escalation_level=1)
    return {"decision": interrupt({WAIT_KEY: marker, "ask": "deploy?"})}


def _plain(state: State) -> dict[str, Any]:
    return {"decision": interrupt("no marker here")}


def _graph(saver: Any, node: Any) -> Any:
    b = StateGraph(State)
    b.add_node("n", node)
    b.add_edge(START, "n")
    b.add_edge("n", END)
    return b.compile(checkpointer=saver)


async def test_marked_interrupts_are_indexed_then_dropped(saver) -> None:
    tid, other = f"t-{uuid.uuid4()}", f"o-{uuid.uuid4()}"
    graph = _graph(saver, _approve)
    out = await graph.ainvoke({"decision": ""}, {"configurable": {"thread_id": tid}})
    await graph.ainvoke({"decision": ""}, {"configurable": {"thread_id": other}})
    plain = {"configurable": {"thread_id": "p" + tid}}
    await _graph(saver, _plain).ainvoke({"decision": ""}, plain)

    waits = await method_of(saver, "alist_waits")(thread_id=tid)
    assert len(waits) == 1
    (w,) = waits
    assert w.interrupt_id == out["__interrupt__"][0].id
    assert w.info.kind == "approval" and w.info.deadline == DEADLINE
    assert w.info.approvers == ("ops",) and w.info.escalation_level == 1
    assert w.value["ask"] == "deploy?"
    assert {x.thread_id for x in await method_of(saver, "alist_waits")(approver="ops")} >= {
        tid,
        other,
    }
    assert await method_of(saver, "alist_waits")(thread_id="p" + tid) == []
    assert await method_of(saver, "alist_waits")(thread_id=tid, kind="batch") == []
    assert await method_of(saver, "alist_waits")(thread_id=tid, approver="nobody") == []

    # resuming moves the thread past the interrupt: its entry goes
    await graph.ainvoke(Command(resume="yes"), {"configurable": {"thread_id": tid}})
    assert await method_of(saver, "alist_waits")(thread_id=tid) == []
    # deleting a thread drops its entries
    assert len(await method_of(saver, "alist_waits")(thread_id=other)) == 1
    await saver.adelete_thread(other)
    assert await method_of(saver, "alist_waits")(thread_id=other) == []


def _ask_twice(state: State) -> dict[str, Any]:
    first = interrupt({WAIT_KEY: wait_marker("approval", DEADLINE), "ask": "first"})
    later = DEADLINE + timedelta(days=1)
    second = interrupt({WAIT_KEY: wait_marker("approval", later, escalation_level=1), "ask": "2nd"})
    return {"decision": f"{first}+{second}"}


async def test_a_re_ask_in_the_same_task_replaces_its_entry(saver) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    graph = _graph(saver, _ask_twice)
    await graph.ainvoke({"decision": ""}, config)
    (w,) = await method_of(saver, "alist_waits")(thread_id=config["configurable"]["thread_id"])
    assert w.value["ask"] == "first"
    out = await graph.ainvoke(Command(resume="a"), config)
    (w2,) = await method_of(saver, "alist_waits")(thread_id=config["configurable"]["thread_id"])
    assert w2.value["ask"] == "2nd" and w2.info.escalation_level == 1
    assert w2.interrupt_id == out["__interrupt__"][0].id != w.interrupt_id
    out = await graph.ainvoke(Command(resume="b"), config)
    assert out["decision"] == "a+b"
    assert (
        await method_of(saver, "alist_waits")(thread_id=config["configurable"]["thread_id"]) == []
    )
