"""A real graph interrupted through one saver instance resumes through another."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    items: Annotated[list[str], operator.add]
    answer: str


def _work(state: State) -> dict[str, Any]:
    return {"items": ["worked"]}


def _ask(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "ship it?"})
    return {"items": [f"answered:{answer}"], "answer": answer}


def _builder() -> StateGraph:
    b = StateGraph(State)
    b.add_node("work", _work)
    b.add_node("ask", _ask)
    b.add_edge(START, "work")
    b.add_edge("work", "ask")
    b.add_edge("ask", END)
    return b


async def test_interrupt_then_resume_with_a_second_instance(saver_factory) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    async with saver_factory() as first:
        graph = _builder().compile(checkpointer=first)
        out = await graph.ainvoke({"items": ["start"], "answer": ""}, config)
        assert out["__interrupt__"][0].value == {"question": "ship it?"}
    async with saver_factory() as second:
        graph = _builder().compile(checkpointer=second)
        paused = await graph.aget_state(config)
        assert paused.next == ("ask",)
        assert paused.interrupts[0].value == {"question": "ship it?"}
        out = await graph.ainvoke(Command(resume="yes"), config)
        assert out == {"items": ["start", "worked", "answered:yes"], "answer": "yes"}
        done = await graph.aget_state(config)
        assert done.next == ()
        history = [s async for s in graph.aget_state_history(config)]
        assert [h.metadata["step"] for h in history] == sorted(
            (h.metadata["step"] for h in history), reverse=True
        )
        assert len(history) >= 4
        # the time-travel view: the checkpoint before `ask` still shows the pause
        before_ask = next(h for h in history if h.next == ("ask",))
        assert before_ask.values["items"] == ["start", "worked"]


async def test_a_finished_thread_continues_with_new_input(saver) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    b = StateGraph(State)
    b.add_node("work", _work)
    b.add_edge(START, "work")
    b.add_edge("work", END)
    graph = b.compile(checkpointer=saver)
    await graph.ainvoke({"items": ["a"], "answer": ""}, config)
    out = await graph.ainvoke({"items": ["b"]}, config)
    assert out["items"] == ["a", "worked", "b", "worked"]
