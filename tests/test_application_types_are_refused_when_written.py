"""A value the saver could not read back is refused when it is written, not when it is read.

The savers read with a strict msgpack allowlist. A state holding an
application type (a dataclass, a pydantic model,
``langchain_core.agents.AgentAction``) would be stored fine and then refused
on the next read with ``CorruptCheckpointError``: at resume, hours later. So
``put`` / ``put_writes`` refuse it with an error naming the channel, the type
and the fix, and store nothing. With the type allowlisted
(``saver.with_allowlist``), or with ``LANGGRAPH_STRICT_MSGPACK=true`` (the
compiled graph then allows its schemas' types), the same graphs run and read
back. On both backends, sync and async.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.agents import AgentAction
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from langgraph_durable.checkpointers import UnreadableValueError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import SAVER_KINDS, area_fixture

KINDS = SAVER_KINDS
ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Order(BaseModel):
    item: str
    qty: int


class AgentState(TypedDict, total=False):
    step: int
    action: AgentAction | None


def dataclass_graph(saver: Any) -> Any:
    def move(state: Point) -> dict[str, Any]:
        return {"x": state.x + 1}

    builder = StateGraph(Point)
    builder.add_node("move", move)
    builder.add_edge(START, "move")
    return builder.compile(checkpointer=saver)


def pydantic_graph(saver: Any) -> Any:
    def more(state: Order) -> dict[str, Any]:
        return {"qty": state.qty + 1}

    builder = StateGraph(Order)
    builder.add_node("more", more)
    builder.add_edge(START, "more")
    return builder.compile(checkpointer=saver)


def agent_graph(saver: Any) -> Any:
    def act(state: AgentState) -> dict[str, Any]:
        return {"step": 1, "action": AgentAction(tool="search", tool_input="q", log="l")}

    builder = StateGraph(AgentState)
    builder.add_node("act", act)
    builder.add_edge(START, "act")
    return builder.compile(checkpointer=saver)


@asynccontextmanager
async def open_saver(kind: str, url: str, area: str) -> AsyncIterator[Any]:
    if kind == "postgres-sync":
        with PostgresSaver.from_conn_string(url, schema=area) as s:
            s.setup()
            yield s
    elif kind == "postgres-async":
        async with AsyncPostgresSaver.from_conn_string(url, schema=area) as s:
            await s.setup()
            yield s
    elif kind == "redis-sync":
        with RedisSaver.from_conn_string(url, prefix=area) as s:
            s.setup()
            yield s
    else:
        async with AsyncRedisSaver.from_conn_string(url, prefix=area) as s:
            await s.setup()
            yield s


async def invoke(kind: str, graph: Any, value: Any, config: Any) -> Any:
    if kind.endswith("async"):
        return await graph.ainvoke(value, config)
    return graph.invoke(value, config)


async def get_state(kind: str, graph: Any, config: Any) -> Any:
    if kind.endswith("async"):
        return await graph.aget_state(config)
    return graph.get_state(config)


async def call(kind: str, saver: Any, method: str, *args: Any) -> Any:
    if kind.endswith("async"):
        return await getattr(saver, "a" + method)(*args)
    return getattr(saver, method)(*args)


def _area(kind: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    fixture = area_fixture(kind)
    url, area = request.getfixturevalue(fixture)
    return url, area


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_graph_whose_state_reads_would_refuse_fails_at_its_first_write(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(kind, request)
    async with open_saver(kind, url, area) as saver:
        cases = [
            (dataclass_graph, Point(x=1, y=2), f"{__name__}.Point"),
            (pydantic_graph, Order(item="a", qty=1), f"{__name__}.Order"),
            (agent_graph, {"step": 0}, "langchain_core.agents.AgentAction"),
        ]
        for n, (build, value, type_name) in enumerate(cases):
            config = _cfg(f"t-{n}")
            with pytest.raises(UnreadableValueError) as info:
                await invoke(kind, build(saver), value, config)
            err = info.value
            assert err.types == (type_name,)
            assert err.channel is not None and f"channel {err.channel!r}" in str(err)
            module, name = type_name.rsplit(".", 1)
            assert f"saver.with_allowlist([({module!r}, {name!r})])" in str(err)
            assert "LANGGRAPH_STRICT_MSGPACK=true" in str(err)
            # nothing that cannot be read back was stored: every checkpoint reads
            tup = await call(kind, saver, "get_tuple", config)
            if tup is not None:
                assert all(type_name not in repr(w) for w in tup.pending_writes or [])


@pytest.mark.parametrize("kind", KINDS)
async def test_a_refused_put_writes_stores_nothing(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(kind, request)
    async with open_saver(kind, url, area) as saver:
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        stored = await call(kind, saver, "put", config, empty_checkpoint(), {"step": -1}, {})
        action = AgentAction(tool="search", tool_input="q", log="l")
        writes = [("ok", 1), ("action", action)]
        with pytest.raises(UnreadableValueError) as info:
            await call(kind, saver, "put_writes", stored, writes, "task-1", "")
        assert info.value.channel == "action"
        tup = await call(kind, saver, "get_tuple", stored)
        assert tup.pending_writes == []
        with pytest.raises(UnreadableValueError):
            await call(kind, saver, "put", config, empty_checkpoint(), {"step": 0, "a": action}, {})
        assert len(await _listed(kind, saver, config)) == 1


async def _listed(kind: str, saver: Any, config: Any) -> list[Any]:
    if kind.endswith("async"):
        return [t async for t in saver.alist(config)]
    return list(saver.list(config))


@pytest.mark.parametrize("kind", KINDS)
async def test_an_allowlisted_type_is_stored_and_read_back(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(kind, request)
    async with open_saver(kind, url, area) as saver:
        allowed = saver.with_allowlist(
            [(__name__, "Point"), ("langchain_core.agents", "AgentAction")]
        )
        graph = dataclass_graph(allowed)
        await invoke(kind, graph, Point(x=1, y=2), _cfg("p"))
        assert (await get_state(kind, graph, _cfg("p"))).values == {"x": 2, "y": 2}
        graph = agent_graph(allowed)
        await invoke(kind, graph, {"step": 0}, _cfg("a"))
        state = await get_state(kind, graph, _cfg("a"))
        assert state.values["action"] == AgentAction(tool="search", tool_input="q", log="l")


_STRICT_RUN = """
import asyncio, json, sys
sys.path.insert(0, {root!r})
from tests.test_application_types_are_refused_when_written import (
    Order, Point, agent_graph, dataclass_graph, get_state, invoke, open_saver, pydantic_graph,
)
from langchain_core.agents import AgentAction

async def main(kind, url, area):
    out = {{}}
    async with open_saver(kind, url, area) as saver:
        for name, build, value in [
            ("dataclass", dataclass_graph, Point(x=1, y=2)),
            ("pydantic", pydantic_graph, Order(item="a", qty=1)),
            ("agent", agent_graph, {{"step": 0}}),
        ]:
            config = {{"configurable": {{"thread_id": name}}}}
            graph = build(saver)
            await invoke(kind, graph, value, config)
            out[name] = repr((await get_state(kind, graph, config)).values)
    print(json.dumps(out))

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.parametrize("kind", KINDS)
def test_with_langgraph_strict_msgpack_the_graphs_own_types_read_back(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(kind, request)
    env = dict(os.environ, LANGGRAPH_STRICT_MSGPACK="true")
    out = subprocess.run(
        [sys.executable, "-c", _STRICT_RUN.format(root=str(ROOT)), kind, url, area],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    values = json.loads(out.stdout.strip().splitlines()[-1])
    assert values["dataclass"] == repr({"x": 2, "y": 2})
    assert values["pydantic"] == repr({"item": "a", "qty": 2})
    assert "AgentAction(tool='search'" in values["agent"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_growing_list_is_checked_for_the_items_it_appends(
    kind: str, request: pytest.FixtureRequest
) -> None:
    # the check reads only the items a growing list appends to a version it
    # checked before: an appended application type is still refused
    url, area = _area(kind, request)
    async with open_saver(kind, url, area) as saver:
        config = {"configurable": {"thread_id": "grow", "checkpoint_ns": ""}}
        items: list[Any] = [{"n": i, "text": "x" * 40} for i in range(40)]
        stored = config
        prev: Any = None
        for step in range(1, 4):
            items = [*items, {"n": 100 + step}]
            cp = empty_checkpoint()
            cp["channel_values"] = {"items": items}
            cp["channel_versions"] = {"items": saver.get_next_version(prev, None)}
            prev = cp["channel_versions"]["items"]
            stored = await call(kind, saver, "put", stored, cp, {"step": step}, {"items": prev})
        action = AgentAction(tool="search", tool_input="q", log="l")
        cp = empty_checkpoint()
        cp["channel_values"] = {"items": [*items, action]}
        cp["channel_versions"] = {"items": saver.get_next_version(prev, None)}
        with pytest.raises(UnreadableValueError) as info:
            await call(kind, saver, "put", stored, cp, {"step": 4}, dict(cp["channel_versions"]))
        assert info.value.channel == "items"
        assert info.value.types == ("langchain_core.agents.AgentAction",)
        tup = await call(kind, saver, "get_tuple", config)
        assert tup.metadata["step"] == 3 and tup.checkpoint["channel_values"]["items"] == items
