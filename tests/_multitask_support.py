"""Racing runs of one thread for the multitask tests: the graph, its effects, the racers.

The graph is a conversation that never ends: ``ask`` pauses at an interrupt,
``act`` does the side effect for the answer, then ``ask`` pauses again. Each
resume answers one question. ``act`` records its side effect on the server
under test (a table in the test's schema, or keys under the test's prefix),
with how many ``act`` calls were inside their effect at that moment, so an
overlap of two runs is seen even if their clocks disagree.
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypedDict

import psycopg
import redis
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from psycopg import sql

from langgraph_durable.checkpointers import ThreadBusy
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import POSTGRES
from tests._parts import part_of

THREAD = "shared"
EFFECT_SECONDS = 0.3


class Chat(TypedDict, total=False):
    answers: Annotated[list[str], operator.add]
    done: Annotated[list[str], operator.add]


class Effects:
    """Side effects and racer notes on the server under test (Postgres or Redis)."""

    def __init__(self, backend: str, url: str, area: str) -> None:
        self.backend, self.url, self.area = backend, url, area
        self._pg: psycopg.Connection[Any] | None = None
        self._redis: redis.Redis | None = None

    def _sql(self, query: str) -> sql.Composed:
        return sql.SQL(query).format(s=sql.Identifier(self.area))

    def _conn(self) -> psycopg.Connection[Any]:
        if self._pg is None or self._pg.closed:
            self._pg = psycopg.connect(self.url, autocommit=True)
        return self._pg

    def _r(self) -> redis.Redis:
        if self._redis is None:
            self._redis = redis.Redis.from_url(self.url)
        return self._redis

    def _key(self, name: str) -> str:
        return f"{self.area}:mt:{name}"

    def create(self) -> None:
        """Make the effect tables (Postgres; Redis needs nothing)."""
        if self.backend == POSTGRES:
            conn = self._conn()
            conn.execute(
                self._sql(
                    "CREATE TABLE {s}.mt_effects (seq bigserial PRIMARY KEY, row jsonb NOT NULL)"
                )
            )
            conn.execute(self._sql("CREATE TABLE {s}.mt_inside (id int PRIMARY KEY, n int)"))
            conn.execute(self._sql("INSERT INTO {s}.mt_inside VALUES (1, 0)"))
            conn.execute(self._sql("CREATE TABLE {s}.mt_notes (kind text, tag text)"))

    def enter(self) -> int:
        """One more ``act`` inside its effect; how many are inside now."""
        if self.backend == POSTGRES:
            row = (
                self._conn()
                .execute(self._sql("UPDATE {s}.mt_inside SET n = n + 1 WHERE id = 1 RETURNING n"))
                .fetchone()
            )
            assert row is not None
            return int(row[0])
        return int(self._r().incr(self._key("inside")))

    def leave(self) -> None:
        if self.backend == POSTGRES:
            self._conn().execute(self._sql("UPDATE {s}.mt_inside SET n = n - 1 WHERE id = 1"))
        else:
            self._r().decr(self._key("inside"))

    def record(self, row: dict[str, Any]) -> None:
        """Store one side effect."""
        if self.backend == POSTGRES:
            self._conn().execute(
                self._sql("INSERT INTO {s}.mt_effects (row) VALUES (%s)"), [json.dumps(row)]
            )
        else:
            self._r().rpush(self._key("effects"), json.dumps(row))

    def rows(self) -> list[dict[str, Any]]:
        """Every side effect, in the order they were stored."""
        if self.backend == POSTGRES:
            got = self._conn().execute(self._sql("SELECT row FROM {s}.mt_effects ORDER BY seq"))
            return [r[0] for r in got.fetchall()]
        return [json.loads(r) for r in self._r().lrange(self._key("effects"), 0, -1)]

    def note(self, kind: str, tag: str) -> None:
        """A racer says what it did (``invoking``, ``busy``)."""
        if self.backend == POSTGRES:
            self._conn().execute(self._sql("INSERT INTO {s}.mt_notes VALUES (%s, %s)"), [kind, tag])
        else:
            self._r().rpush(self._key(f"note:{kind}"), tag)

    def count(self, kind: str) -> int:
        if self.backend == POSTGRES:
            row = (
                self._conn()
                .execute(self._sql("SELECT count(*) FROM {s}.mt_notes WHERE kind = %s"), [kind])
                .fetchone()
            )
            return int(row[0]) if row else 0
        return int(self._r().llen(self._key(f"note:{kind}")))

    def wait_for(self, kind: str, n: int, timeout: float = 60.0) -> bool:
        """Wait until ``n`` racers noted ``kind`` (``False`` on timeout)."""
        deadline = time.monotonic() + timeout
        while self.count(kind) < n:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
        if self._redis is not None:
            self._redis.close()


def chat_graph(saver: Any, effects: Effects, hold: tuple[str, int] | None = None) -> Any:
    """The conversation graph; ``hold``: the first ``act`` waits for that many notes."""

    def ask(state: Chat) -> dict[str, Any]:
        return {"answers": [interrupt({"question": len(state.get("answers", []))})]}

    def act(state: Chat) -> dict[str, Any]:
        answer = state["answers"][-1]
        inside = effects.enter()
        started = time.time()
        waited = False
        if hold is not None and not effects.rows():
            waited = effects.wait_for(*hold)  # the other racers are trying meanwhile
        time.sleep(EFFECT_SECONDS)
        ended = time.time()
        effects.leave()
        effects.record(
            {
                "answer": answer,
                "inside": inside,
                "started": started,
                "ended": ended,
                "seen": len(state["answers"]),
                "pid": os.getpid(),
                "held_for_others": waited,
            }
        )
        return {"done": [answer]}

    builder: StateGraph[Any] = StateGraph(Chat)
    builder.add_node("ask", ask)
    builder.add_node("act", act)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "act")
    builder.add_edge("act", "ask")
    return builder.compile(checkpointer=saver)


@contextmanager
def sync_saver(backend: str, url: str, area: str, **options: Any) -> Iterator[Any]:
    """A set-up sync saver of ``backend`` on the test's schema or prefix."""
    if backend == POSTGRES:
        with PostgresSaver.from_conn_string(url, schema=area, pool_size=3, **options) as saver:
            saver.setup()
            yield saver
            if saver.run_leases is not None:
                saver.run_leases.close()
    else:
        with RedisSaver.from_conn_string(url, prefix=area, **options) as saver:
            saver.setup()
            yield saver
            if saver.run_leases is not None:
                saver.run_leases.close()


def async_saver(backend: str, url: str, area: str, **options: Any) -> Any:
    """An async saver's context manager (call ``setup()`` inside)."""
    if backend == POSTGRES:
        return AsyncPostgresSaver.from_conn_string(url, schema=area, pool_size=3, **options)
    return AsyncRedisSaver.from_conn_string(url, prefix=area, **options)


def outcome_of(exc: BaseException | None, answer: str) -> dict[str, Any]:
    """What a racer reports: ``ok``, ``busy`` (with the error's fields) or ``error``."""
    if exc is None:
        return {"tag": answer, "pid": os.getpid(), "outcome": "ok"}
    if isinstance(exc, ThreadBusy):
        return {
            "tag": answer,
            "pid": os.getpid(),
            "outcome": "busy",
            "thread_id": exc.thread_id,
            "owner": exc.owner,
            "since": exc.since.isoformat() if exc.since else None,
            "strategy": exc.strategy,
        }
    return {"tag": answer, "pid": os.getpid(), "outcome": f"error: {type(exc).__name__}: {exc}"}


def racer(spec: dict[str, Any], ready: Any, go: Any, results: Any) -> None:
    """A racing process: open a saver with ``spec['strategy']``, wait at the gate, resume."""
    effects = Effects(spec["backend"], spec["url"], spec["area"])
    tag = spec["tag"]
    options = {"multitask": spec["strategy"], "multitask_timeout": 120}
    hold = tuple(spec["hold"]) if spec.get("hold") else None
    error: BaseException | None = None
    try:
        if spec["api"] == "sync":
            with sync_saver(spec["backend"], spec["url"], spec["area"], **options) as saver:
                graph = chat_graph(saver, effects, hold)  # type: ignore[arg-type]
                ready.put(tag)
                go.wait(60)
                effects.note("invoking", tag)
                try:
                    graph.invoke(Command(resume=tag), {"configurable": {"thread_id": THREAD}})
                except ThreadBusy as exc:
                    error = exc
                    effects.note("busy", tag)
                else:
                    _wait_released(saver, saver.run_leases.owner)
        else:
            error = asyncio.run(_arace(spec, effects, hold, ready, go, options))
    except BaseException as exc:
        error = exc
    results.put(outcome_of(error, tag))
    effects.close()
    results.close()
    results.join_thread()  # flushed before the hard exit
    os._exit(0)


async def _arace(
    spec: dict[str, Any],
    effects: Effects,
    hold: Any,
    ready: Any,
    go: Any,
    options: dict[str, Any],
) -> BaseException | None:
    tag = spec["tag"]
    async with async_saver(spec["backend"], spec["url"], spec["area"], **options) as saver:
        await saver.setup()
        graph = chat_graph(saver, effects, hold)
        ready.put(tag)
        go.wait(60)
        effects.note("invoking", tag)
        try:
            await graph.ainvoke(Command(resume=tag), {"configurable": {"thread_id": THREAD}})
        except ThreadBusy as exc:
            effects.note("busy", tag)
            return exc
        else:
            await _await_released(saver, saver.arun_leases.owner)
        finally:
            saver.arun_leases.close()
    return None


def _released(record: Any, owner: str) -> bool:
    return record is None or record.state != "running" or record.owner != owner


def _wait_released(saver: Any, owner: str) -> None:
    """A paused run's lease goes back once the run has returned: wait for that (<= 10 s)."""
    deadline = time.monotonic() + 10
    while not _released(part_of(saver, "leases").get_lease(thread_id=THREAD), owner):
        if time.monotonic() > deadline:
            raise AssertionError("the paused run's lease was not released after it returned")
        time.sleep(0.01)


async def _await_released(saver: Any, owner: str) -> None:
    """See :func:`_wait_released`."""
    deadline = time.monotonic() + 10
    while not _released(await part_of(saver, "leases").aget_lease(thread_id=THREAD), owner):
        if time.monotonic() > deadline:
            raise AssertionError("the paused run's lease was not released after it returned")
        await asyncio.sleep(0.01)
