"""Redis: the thread registry stays right when another saver deletes a thread.

Each saver skips registrations it sent recently (the registry is cross-slot,
so it cannot be part of the put's script). A thread deleted by another saver,
or another process, and then written again by this one must be registered
again: a listing across threads (``list(None)``) finds it, whichever saver
deleted it and whichever writes it next.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers.redis import RedisSaver


class State(TypedDict):
    steps: Annotated[list[str], operator.add]


def graph_on(saver: RedisSaver) -> Any:
    builder = StateGraph(State)
    builder.add_node("step", lambda state: {"steps": ["step"]})
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=saver)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def listed(url: str, prefix: str) -> set[str]:
    """The threads a saver that never wrote anything finds."""
    with RedisSaver.from_conn_string(url, prefix=prefix) as reader:
        return {c.config["configurable"]["thread_id"] for c in reader.list(None)}


@pytest.fixture(params=["redis_prefix", "cluster_prefix"])
def area(request: pytest.FixtureRequest) -> tuple[str, str]:
    """``(url, prefix)`` on the shared server, or on the test cluster."""
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


@pytest.fixture
def two_savers(area: tuple[str, str]) -> Iterator[tuple[RedisSaver, RedisSaver]]:
    """Two savers on one prefix, each with its own registration cache (as two processes)."""
    url, prefix = area
    with (
        RedisSaver.from_conn_string(url, prefix=prefix) as a,
        RedisSaver.from_conn_string(url, prefix=prefix) as b,
    ):
        a.setup()
        yield a, b


def test_a_thread_deleted_by_another_saver_and_written_again_is_listed(
    area: tuple[str, str], two_savers: tuple[RedisSaver, RedisSaver]
) -> None:
    url, prefix = area
    a, b = two_savers
    graph_a, graph_b = graph_on(a), graph_on(b)
    graph_a.invoke({"steps": []}, cfg("t1"))
    graph_b.invoke({"steps": []}, cfg("t2"))
    assert listed(url, prefix) == {"t1", "t2"}

    b.delete_thread("t1")  # a wrote it, b deletes it, a writes it again
    assert listed(url, prefix) == {"t2"}
    graph_a.invoke({"steps": []}, cfg("t1"))
    assert listed(url, prefix) == {"t1", "t2"}

    a.delete_thread("t2")  # the reverse: b wrote it, a deletes it
    graph_b.invoke({"steps": []}, cfg("t2"))
    assert listed(url, prefix) == {"t1", "t2"}
    assert graph_b.get_state(cfg("t2")).values == {"steps": ["step"]}


def test_a_run_deleted_by_another_saver_keeps_finding_its_new_checkpoints(
    area: tuple[str, str], two_savers: tuple[RedisSaver, RedisSaver]
) -> None:
    url, prefix = area
    a, b = two_savers
    graph_a = graph_on(a)
    run_id = "00000000-0000-4000-8000-000000000001"
    graph_a.invoke({"steps": []}, {"configurable": {"thread_id": "t1", "run_id": run_id}})
    b.delete_for_runs([run_id])
    assert listed(url, prefix) == set()
    graph_a.invoke({"steps": []}, {"configurable": {"thread_id": "t1", "run_id": run_id}})
    assert listed(url, prefix) == {"t1"}
    b.delete_for_runs([run_id])  # the run's new checkpoints are found too
    assert listed(url, prefix) == set()
