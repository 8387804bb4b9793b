"""Threads whose message list grows (stored as deltas) read back exactly.

The same randomized sequence of turns, edits by id, removals, ``RemoveMessage``
of everything, and forks from older checkpoints runs on LangGraph's
``InMemorySaver`` and on our saver; every checkpoint of the history must hold
``==`` values. Then the operations that delete or copy rows (prune,
delete_for_runs, copy_thread, delete_thread from another instance) must leave
every kept checkpoint readable.
"""

from __future__ import annotations

import random
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _reply(state: State) -> dict[str, Any]:
    n = len(state["messages"])
    last = state["messages"][-1].content if state["messages"] else ""
    return {"messages": [AIMessage(content=f"reply {n} to {last}" * 3, id=f"ai-{n}-{last[:8]}")]}


def _graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("reply", _reply)
    b.add_edge(START, "reply")
    b.add_edge("reply", END)
    return b.compile(checkpointer=saver)


async def _history(graph: Any, config: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (s.values, s.next, s.metadata.get("step")) async for s in graph.aget_state_history(config)
    ]


async def _play(graph: Any, config: dict[str, Any], seed: int, turns: int) -> list[str]:
    """Apply a seeded sequence of operations; returns the run ids of the turns."""
    rng = random.Random(seed)
    run_ids = []
    for i in range(turns):
        state = await graph.aget_state(config)
        ids = [m.id for m in state.values.get("messages", [])]
        op = rng.choice(["turn"] * 6 + ["edit", "remove", "remove_all", "fork"])
        if op == "turn" or not ids:
            run_id = str(uuid.UUID(int=rng.getrandbits(128)))
            run_ids.append(run_id)
            text = f"question {i} " + "x" * rng.randint(50, 400)
            await graph.ainvoke(
                {"messages": [HumanMessage(content=text, id=f"h-{i}")]},
                {**config, "metadata": {"run_id": run_id}},
            )
        elif op == "edit":
            target = rng.choice(ids)
            await graph.aupdate_state(
                config, {"messages": [AIMessage(content=f"edited {i}", id=target)]}
            )
        elif op == "remove":
            await graph.aupdate_state(config, {"messages": [RemoveMessage(id=rng.choice(ids))]})
        elif op == "remove_all":
            await graph.aupdate_state(
                config,
                {
                    "messages": [
                        RemoveMessage(id=REMOVE_ALL_MESSAGES),
                        HumanMessage("fresh", id=f"r-{i}"),
                    ]
                },
            )
        else:
            history = [s async for s in graph.aget_state_history(config)]
            old = history[rng.randrange(len(history))]
            await graph.aupdate_state(
                old.config, {"messages": [HumanMessage(content=f"fork {i}", id=f"f-{i}")]}
            )
    return run_ids


async def test_random_histories_match_the_in_memory_saver(saver) -> None:
    for seed in range(3):
        config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
        ours, ref = _graph(saver), _graph(InMemorySaver())
        await _play(ours, config, seed, 40)
        await _play(ref, config, seed, 40)
        got, want = await _history(ours, config), await _history(ref, config)
        assert len(got) == len(want)
        assert got == want


async def test_a_long_thread_survives_prune_and_keeps_growing(saver) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    ours, ref = _graph(saver), _graph(InMemorySaver())
    for graph in (ours, ref):
        for i in range(40):
            await graph.ainvoke(
                {"messages": [HumanMessage(f"q{i} " + "y" * 300, id=f"h{i}")]}, config
            )
    before = (await ours.aget_state(config)).values
    await saver.aprune([config["configurable"]["thread_id"]], strategy="keep_latest")
    assert (await ours.aget_state(config)).values == before
    for graph in (ours, ref):
        for i in range(40, 45):
            await graph.ainvoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")]}, config)
    assert (await ours.aget_state(config)).values == (await ref.aget_state(config)).values


async def test_deleting_early_runs_keeps_what_later_checkpoints_build_on(saver) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    graph = _graph(saver)
    run_ids = []
    for i in range(30):
        run_id = str(uuid.uuid4())
        run_ids.append(run_id)
        await graph.ainvoke(
            {"messages": [HumanMessage(f"q{i} " + "z" * 300, id=f"h{i}")]},
            {**config, "metadata": {"run_id": run_id}},
        )
    kept = [
        s
        async for s in graph.aget_state_history(config)
        if s.metadata.get("run_id") in run_ids[20:]
    ]
    await saver.adelete_for_runs(run_ids[:20])
    after = [s async for s in graph.aget_state_history(config)]
    assert [(s.config, s.values) for s in after] == [(s.config, s.values) for s in kept]
    latest = await graph.aget_state(config)
    assert len(latest.values["messages"]) == 60


async def test_a_copied_thread_reads_like_its_source(saver) -> None:
    source = f"t-{uuid.uuid4()}"
    target = f"t-{uuid.uuid4()}"
    graph = _graph(saver)
    await _play(graph, {"configurable": {"thread_id": source}}, 7, 25)
    await saver.acopy_thread(source, target)
    src = await _history(graph, {"configurable": {"thread_id": source}})
    dst = await _history(graph, {"configurable": {"thread_id": target}})
    assert dst == src
    # the copy grows on its own
    await graph.ainvoke(
        {"messages": [HumanMessage("more", id="more")]}, {"configurable": {"thread_id": target}}
    )
    assert await _history(graph, {"configurable": {"thread_id": source}}) == src


async def test_a_put_after_another_instance_deleted_the_thread_reads_back(saver_factory) -> None:
    # The first instance still remembers the versions it wrote; its next put
    # must not build on rows the second instance deleted meanwhile.
    thread = f"t-{uuid.uuid4()}"
    root = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    async with saver_factory() as first, saver_factory() as second:
        # a large first value, then small appends: stored as deltas whatever the policy
        value: list[str] = [f"seed {i} " + "s" * 300 for i in range(50)]
        version = None

        async def put(step: int) -> dict[str, Any]:
            nonlocal value, version
            value = [*value, f"item {step}"]
            version = first.get_next_version(version, None)
            cp = empty_checkpoint()
            cp["id"] = str(uuid6(clock_seq=step))
            cp["channel_values"] = {"items": value}
            cp["channel_versions"] = {"items": version}
            md = {"source": "loop", "step": step, "parents": {}}
            return await first.aput(root, cp, md, {"items": version})

        for step in range(6):
            await put(step)
        await second.adelete_thread(thread)
        config = await put(6)
        tup = await second.aget_tuple(config)
        assert tup is not None
        assert tup.checkpoint["channel_values"]["items"] == value
