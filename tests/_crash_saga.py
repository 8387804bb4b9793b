"""The crash loop's second workflow: activities, a rejected approval, compensation.

``reserve -> charge -> review (approval, rejected) -> ship``: ``reserve`` and
``charge`` are compensable and do their side effects through ``activity``
(``charge`` makes two calls); the rejection (``on_reject="compensate"``) makes
the compensation node undo ``charge`` then ``reserve`` (``refund``,
``release``), one per superstep. ``ship`` must never run.

Every side effect and every undo goes to an *effect store* on the real server
of the backend under test, keyed by idempotency key: in PostgreSQL the tables
``fx_calls`` (every call) and ``fx_effects`` (one row per key, first writer
wins) in the test's schema; in Redis the list ``<prefix>:fx:<thread>:calls``
and the hash ``<prefix>:fx:<thread>:effects`` (``HSETNX``). A SIGKILLed
worker's effects are in the store whatever happened to its checkpoints.

Effects call :func:`tests._crash.point` before (``<name>:enter``) and after
(``<name>:exit``) the write to the store, so the crash loop can kill a worker
between an effect and its record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from langgraph.graph import END, START, StateGraph
from psycopg import sql

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    SagaState,
    activity,
    add_compensation,
    compensable,
    reject,
    request_approval,
)

TASK_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CLOCK_AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
UNDOS = ["refund", "release"]  # the order they must run in: newest first
ACTIVITIES = ["reserve_api", "charge_api", "notify_api"]
ORDER_INPUT: dict[str, Any] = {"order_id": "o-17", "amount": 42}


def clock() -> datetime:
    """A fixed clock: the saga log's times are the same in every run."""
    return CLOCK_AT


class EffectStore:
    """Every call and every (first per key) effect of one backend's test area."""

    def __init__(self, backend: str, url: str, area: str) -> None:
        self.backend, self.url, self.area = backend, url, area

    def setup(self) -> None:
        if self.backend != "postgres":
            return
        with self._pg() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS fx_calls "
                "(id bigserial PRIMARY KEY, thread text, what text, key text)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS fx_effects "
                "(thread text, what text, key text, PRIMARY KEY (thread, what, key))"
            )

    def _pg(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self.url, autocommit=True)
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.area)))
        return conn

    def _redis(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, decode_responses=True)

    def _keys(self, thread: str) -> tuple[str, str]:
        return f"{self.area}:fx:{thread}:calls", f"{self.area}:fx:{thread}:effects"

    def record(self, thread: str, what: str, key: str) -> None:
        if self.backend == "postgres":
            with self._pg() as conn, conn.transaction():
                conn.execute(
                    "INSERT INTO fx_calls (thread, what, key) VALUES (%s, %s, %s)",
                    (thread, what, key),
                )
                conn.execute(
                    "INSERT INTO fx_effects VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    (thread, what, key),
                )
            return
        calls, effects = self._keys(thread)
        client = self._redis()
        try:
            pipe = client.pipeline(transaction=True)
            pipe.rpush(calls, f"{what}\x00{key}")
            pipe.hsetnx(effects, f"{what}\x00{key}", "1")
            pipe.execute()
        finally:
            client.close()

    def calls(self, thread: str) -> list[tuple[str, str]]:
        """``(what, key)`` of every call, in call order."""
        if self.backend == "postgres":
            with self._pg() as conn:
                rows = conn.execute(
                    "SELECT what, key FROM fx_calls WHERE thread = %s ORDER BY id", (thread,)
                ).fetchall()
            return [(w, k) for w, k in rows]
        client = self._redis()
        try:
            raw = client.lrange(self._keys(thread)[0], 0, -1)
        finally:
            client.close()
        return [tuple(r.split("\x00", 1)) for r in raw]

    def effects(self, thread: str) -> list[tuple[str, str]]:
        """``(what, key)`` of every distinct effect, sorted."""
        if self.backend == "postgres":
            with self._pg() as conn:
                rows = conn.execute(
                    "SELECT what, key FROM fx_effects WHERE thread = %s", (thread,)
                ).fetchall()
            return sorted((w, k) for w, k in rows)
        client = self._redis()
        try:
            raw = client.hkeys(self._keys(thread)[1])
        finally:
            client.close()
        return sorted(tuple(r.split("\x00", 1)) for r in raw)


STORE: list[EffectStore] = []  # the store of this process (set by the worker)
POINT: list[Callable[[str], None]] = [lambda name: None]  # the kill hook of this process


def _effect(what: str, thread: str, key: str) -> None:
    POINT[0](f"{what}:enter")
    STORE[0].record(thread, what, key)
    POINT[0](f"{what}:exit")


def _api(what: str) -> Any:
    def call(order_id: str, thread: str, *, idempotency_key: str) -> str:
        _effect(what, thread, idempotency_key)
        return f"{what}:{order_id}"  # no key in it: the same in every thread

    return activity(call, name=what)


reserve_api = _api("reserve_api")
charge_api = _api("charge_api")
notify_api = _api("notify_api")


def release(reservation: str, thread: str, idempotency_key: str) -> dict[str, Any]:
    """Undo of ``reserve``."""
    _effect("release", thread, idempotency_key)
    return {"undone": reservation}


def refund(charge: str, thread: str, idempotency_key: str) -> dict[str, Any]:
    """Undo of ``charge``."""
    _effect("refund", thread, idempotency_key)
    return {"undone": charge}


class OrderState(SagaState, total=False):
    order_id: str
    amount: int
    thread: str
    reservation: str
    charge: str
    notice: str


@compensable(
    undo=release,
    name="crash_saga.release",
    args=lambda s, out: {"reservation": out["reservation"], "thread": s["thread"]},
)
def reserve(state: OrderState) -> dict[str, Any]:
    return {"reservation": reserve_api(state["order_id"], state["thread"])}


@compensable(
    undo=refund,
    name="crash_saga.refund",
    args=lambda s, out: {"charge": out["charge"], "thread": s["thread"]},
)
def charge(state: OrderState) -> dict[str, Any]:
    receipt = charge_api(state["order_id"], state["thread"])
    notice = notify_api(state["order_id"], state["thread"])
    return {"charge": receipt, "notice": notice}


def review(state: OrderState) -> dict[str, Any]:
    request_approval(
        {"order": state["order_id"], "charge": state["charge"]},
        timeout=timedelta(days=1),
        approvers=("ops",),
        on_reject="compensate",
        clock=clock,
    )
    return {}


def ship(state: OrderState) -> dict[str, Any]:
    _effect("ship", state["thread"], "never")
    return {}


def saga_graph(saver: Any) -> Any:
    """The order saga compiled with ``saver``, storing every step (``durability="sync"``).

    Activity keys name the step's task, so side-effecting runs use ``"sync"``
    (docs/guides/compensation.md): with ``"async"`` a kill can lose the newest
    checkpoint and the re-created step gets new keys.
    """
    builder = StateGraph(OrderState)
    builder.add_node("reserve", reserve)
    builder.add_node("charge", charge)
    builder.add_node("review", review)
    builder.add_node("ship", ship)
    builder.add_edge(START, "reserve")
    builder.add_edge("reserve", "charge")
    builder.add_edge("charge", "review")
    builder.add_edge("review", "ship")
    builder.add_edge("ship", END)
    graph = add_compensation(builder, sleep=lambda s: None, clock=clock).compile(checkpointer=saver)
    return graph.with_config(configurable={"__pregel_durability": "sync"})


def drive_to_end(graph: Any, saver: Any, thread_id: str) -> None:
    """Take a saga thread from wherever it is to its end; the approval is rejected."""
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    for _ in range(20):
        if saver.get_tuple(cfg) is None:
            graph.invoke({**ORDER_INPUT, "thread": thread_id}, cfg)
            continue
        state = graph.get_state(cfg)
        if state.interrupts:
            try:
                reject(graph, cfg, by="carol", roles=["ops"], comment="cancelled", clock=clock)
            except AlreadyDecided:
                ApprovalSweeper(graph, lease=timedelta(0), clock=clock).run_once()
            continue
        if state.next or state.tasks:
            graph.invoke(None, cfg)
            continue
        return
    raise AssertionError(f"saga thread {thread_id} did not finish in 20 rounds")


def final_values(graph: Any, thread_id: str) -> dict[str, Any]:
    """The thread's final values, comparable across threads.

    The thread id (an input, and part of keys) is written ``<thread>``, task
    ids (step ids in the saga log; they differ in every run) ``<task>``, and
    the steps' ``committed_at`` (wall-clock time: ``compensable`` does not take
    the injected clock) ``<time>`` once checked to be a time.
    """
    values = dict(graph.get_state({"configurable": {"thread_id": thread_id}}).values)
    assert values["thread"] == thread_id
    return _without(values, thread_id)  # type: ignore[no-any-return]


def _without(value: Any, thread_id: str) -> Any:
    if isinstance(value, str):
        return TASK_ID.sub("<task>", value.replace(thread_id, "<thread>"))
    if isinstance(value, dict):
        if "committed_at" in value:
            datetime.fromisoformat(value["committed_at"])
            value = {**value, "committed_at": "<time>"}
        return {_without(k, thread_id): _without(v, thread_id) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_without(v, thread_id) for v in value)
    return value
