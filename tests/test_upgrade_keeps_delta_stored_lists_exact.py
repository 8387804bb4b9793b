"""upgrade_all and lazy upgrades on threads whose lists are stored as deltas.

Every checkpoint of a long thread (its message list stored as delta chains)
is upgraded by ``upgrade_all`` with a step that rewrites the list; every
upgraded value reads back exactly, and the thread keeps growing afterwards.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.migrations import StateMigrations, upgrade_all
from tests._backends import BACKENDS
from tests._migration_backends import Backend, backend_from_fixture


class State(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    target: int


def _graph(saver: Any) -> Any:
    def append(state: State) -> dict[str, Any]:
        return {"items": [f"item {len(state['items'])} " + "p" * 200]}

    def more(state: State) -> str:
        return "append" if len(state["items"]) < state["target"] else END

    b = StateGraph(State)
    b.add_node("append", append)
    b.add_edge(START, "append")
    b.add_conditional_edges("append", more, ["append", END])
    return b.compile(checkpointer=saver)


v1 = StateMigrations(version=1)
v2 = StateMigrations(version=2)


@v2.upgrade(from_version=1)
def tag_items(values: dict[str, Any]) -> dict[str, Any]:
    if "items" in values:
        values["items"] = [f"v2:{x}" for x in values["items"]]
    return values


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return backend_from_fixture(request.param, request)


def test_every_delta_stored_checkpoint_upgrades_exactly(backend: Backend) -> None:
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    with backend.open(v1) as saver:
        graph = _graph(saver)
        graph.invoke({"items": [], "target": 60}, config)
        before = [s.values for s in graph.get_state_history(config)]
    with backend.open(v2) as saver:
        result = upgrade_all(saver, v2, all_history=True)
        assert result.failed == 0, result.failures
        assert result.upgraded == len(before)
        graph = _graph(saver)
        after = [s.values for s in graph.get_state_history(config)]
        want = [
            {**v, "items": [f"v2:{x}" for x in v["items"]]} if "items" in v else v for v in before
        ]
        assert after == want
        graph.invoke({"target": 70}, config)
        items = graph.get_state(config).values["items"]
        assert len(items) == 70
        assert items[:60] == want[0]["items"]
