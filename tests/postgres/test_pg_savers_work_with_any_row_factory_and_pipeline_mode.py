"""The savers work on the connections callers build, whatever their row factory.

langgraph-checkpoint-postgres documents (and requires) ``row_factory=dict_row``;
other code uses namedtuples or classes. The savers read their own rows
positionally whatever the connection or pool says, on a connection in pipeline
mode (``with conn.pipeline():`` around the saver's use) too, and with
server-side prepared statements on, off or at psycopg's default threshold.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint
from langgraph.types import Command
from psycopg.rows import class_row, dict_row, namedtuple_row, tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_durable.checkpointers import StorageRefusedError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from tests._pause_graph import pause_graph


class _AnyColumns:
    """A row class that takes whatever columns a query returns (for ``class_row``)."""

    def __init__(self, **columns: Any) -> None:
        self.columns = columns


ROW_FACTORIES = {
    "tuple_row": tuple_row,
    "dict_row": dict_row,
    "namedtuple_row": namedtuple_row,
    "class_row": class_row(_AnyColumns),
}
MODES = ["connection", "pipeline", "pool"]
_DEFAULT = "psycopg-default"


def _connect_kwargs(row_factory: Any, prepare_threshold: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"autocommit": True, "row_factory": row_factory}
    if prepare_threshold != _DEFAULT:
        kwargs["prepare_threshold"] = prepare_threshold
    return kwargs


@contextmanager
def _sync_saver(
    url: str, schema: str, mode: str, row_factory: Any, threshold: Any
) -> Iterator[PostgresSaver]:
    kwargs = _connect_kwargs(row_factory, threshold)
    if mode == "pool":
        with ConnectionPool(url, min_size=1, max_size=3, kwargs=kwargs) as pool:
            saver = PostgresSaver(pool, schema=schema)
            saver.setup()
            yield saver
        return
    with psycopg.connect(url, **kwargs) as conn:
        if mode == "pipeline":
            # setup() itself runs in pipeline mode here
            with conn.pipeline():
                saver = PostgresSaver(conn, schema=schema)
                saver.setup()
                yield saver
        else:
            saver = PostgresSaver(conn, schema=schema)
            saver.setup()
            yield saver


@asynccontextmanager
async def _async_saver(
    url: str, schema: str, mode: str, row_factory: Any, threshold: Any
) -> AsyncIterator[AsyncPostgresSaver]:
    kwargs = _connect_kwargs(row_factory, threshold)
    if mode == "pool":
        async with AsyncConnectionPool(
            url, min_size=1, max_size=3, kwargs=kwargs, open=False
        ) as pool:
            saver = AsyncPostgresSaver(pool, schema=schema)
            await saver.setup()
            yield saver
        return
    async with await psycopg.AsyncConnection.connect(url, **kwargs) as conn:
        if mode == "pipeline":
            async with conn.pipeline():
                saver = AsyncPostgresSaver(conn, schema=schema)
                await saver.setup()
                yield saver
        else:
            saver = AsyncPostgresSaver(conn, schema=schema)
            await saver.setup()
            yield saver


def _exercise_sync(saver: PostgresSaver) -> None:
    thread = f"t-{uuid.uuid4().hex}"
    config = {"configurable": {"thread_id": thread}}
    graph = pause_graph(saver)
    assert graph.invoke({"items": ["start"]}, config)["__interrupt__"][0].value == "ship it?"
    assert graph.get_state(config).next == ("ask",)
    assert graph.invoke(Command(resume="yes"), config)["items"] == [
        "start",
        "worked",
        "answered:yes",
    ]
    history = list(graph.get_state_history(config))
    assert len(history) >= 4
    # the plain BaseCheckpointSaver calls, with a filter
    stored = saver.put(
        {"configurable": {"thread_id": f"{thread}-b", "checkpoint_ns": ""}},
        create_checkpoint(empty_checkpoint(), {}, 1),
        {"source": "input", "step": 3, "probe": thread},
        {},
    )
    saver.put_writes(stored, [("items", ["w"])], task_id="task-1")
    tup = saver.get_tuple(stored)
    assert tup is not None and tup.pending_writes == [("task-1", "items", ["w"])]
    found = list(saver.list(None, filter={"step": 3, "probe": thread}))
    assert [t.config["configurable"]["thread_id"] for t in found] == [f"{thread}-b"]
    saver.delete_thread(thread)
    assert saver.get_tuple(config) is None


async def _exercise_async(saver: AsyncPostgresSaver) -> None:
    thread = f"t-{uuid.uuid4().hex}"
    config = {"configurable": {"thread_id": thread}}
    graph = pause_graph(saver)
    out = await graph.ainvoke({"items": ["start"]}, config)
    assert out["__interrupt__"][0].value == "ship it?"
    assert (await graph.aget_state(config)).next == ("ask",)
    # LangGraph's sync get_state from another thread goes through the bridge
    assert (await asyncio.to_thread(graph.get_state, config)).next == ("ask",)
    out = await graph.ainvoke(Command(resume="yes"), config)
    assert out["items"] == ["start", "worked", "answered:yes"]
    assert len([s async for s in graph.aget_state_history(config)]) >= 4
    stored = await saver.aput(
        {"configurable": {"thread_id": f"{thread}-b", "checkpoint_ns": ""}},
        create_checkpoint(empty_checkpoint(), {}, 1),
        {"source": "input", "step": 3, "probe": thread},
        {},
    )
    await saver.aput_writes(stored, [("items", ["w"])], task_id="task-1")
    tup = await saver.aget_tuple(stored)
    assert tup is not None and tup.pending_writes == [("task-1", "items", ["w"])]
    found = [t async for t in saver.alist(None, filter={"step": 3, "probe": thread})]
    assert [t.config["configurable"]["thread_id"] for t in found] == [f"{thread}-b"]
    await saver.adelete_thread(thread)
    assert await saver.aget_tuple(config) is None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("factory", sorted(ROW_FACTORIES))
def test_sync_saver_with_the_callers_row_factory(pg_schema, factory: str, mode: str) -> None:
    url, schema = pg_schema
    with _sync_saver(url, schema, mode, ROW_FACTORIES[factory], 0) as saver:
        _exercise_sync(saver)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("factory", sorted(ROW_FACTORIES))
async def test_async_saver_with_the_callers_row_factory(pg_schema, factory: str, mode: str) -> None:
    url, schema = pg_schema
    async with _async_saver(url, schema, mode, ROW_FACTORIES[factory], 0) as saver:
        await _exercise_async(saver)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("threshold", [None, _DEFAULT])
def test_sync_saver_with_prepared_statements_off_or_default(
    pg_schema, threshold: Any, mode: str
) -> None:
    url, schema = pg_schema
    with _sync_saver(url, schema, mode, dict_row, threshold) as saver:
        _exercise_sync(saver)
        _exercise_sync(saver)  # a second round: past psycopg's default threshold of 5


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("threshold", [None, _DEFAULT])
async def test_async_saver_with_prepared_statements_off_or_default(
    pg_schema, threshold: Any, mode: str
) -> None:
    url, schema = pg_schema
    async with _async_saver(url, schema, mode, dict_row, threshold) as saver:
        await _exercise_async(saver)
        await _exercise_async(saver)


def test_a_failed_statement_in_pipeline_mode_raises_in_its_own_call(pg_schema) -> None:
    """In pipeline mode an error is raised by the call that caused it, not a later one."""
    url, schema = pg_schema
    with _sync_saver(url, schema, "pipeline", dict_row, 0) as saver:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                psycopg.sql.SQL(
                    "ALTER TABLE {}.checkpoint_writes ADD CHECK (channel <> 'bad')"
                ).format(psycopg.sql.Identifier(schema))
            )
        stored = saver.put(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
            empty_checkpoint(),
            {},
            {},
        )
        with pytest.raises(StorageRefusedError) as refused:
            saver.put_writes(stored, [("bad", 1)], task_id="task-1")
        assert refused.value.code == "23514"  # check_violation, with the server's message
        # the connection is usable again and nothing of the refused call was stored
        saver.put_writes(stored, [("good", 2)], task_id="task-2")
        tup = saver.get_tuple(stored)
        assert tup is not None and tup.pending_writes == [("task-2", "good", 2)]
