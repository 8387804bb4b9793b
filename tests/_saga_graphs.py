"""The order saga the compensation tests run: reserve -> charge -> notify -> ship.

Undos and side effects write to a *ledger*: a list in-process, a PostgreSQL
table in the subprocess workers (so a SIGKILLed process's effects are still
counted). ``LGD_KILL_AT`` names a point at which the worker SIGKILLs itself.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
from typing import Any

import psycopg
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict

from langgraph_durable.interrupts import SagaState, activity, add_compensation, compensable


def maybe_kill(point: str) -> None:
    """SIGKILL this process if ``LGD_KILL_AT`` names ``point``."""
    if os.environ.get("LGD_KILL_AT") == point:
        os.kill(os.getpid(), signal.SIGKILL)


class ListLedger:
    """In-process ledger: every call and every (deduplicated) effect."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[str, str | None]] = []
        self.effects: dict[tuple[str, str | None], Any] = {}

    def record(self, what: str, key: str | None, detail: Any = None) -> None:
        with self.lock:
            self.calls.append((what, key))
            self.effects.setdefault((what, key), detail)

    def call_names(self) -> list[str]:
        return [w for w, _ in self.calls]


class PgLedger:
    """Ledger in PostgreSQL: ``calls`` (every call) and ``effects`` (one per key)."""

    def __init__(self, url: str, schema: str) -> None:
        self.url = url
        self.schema = schema

    def setup(self) -> None:
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS ledger_calls "
                "(id serial PRIMARY KEY, what text, key text)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS ledger_effects (what text, key text, detail text, "
                "PRIMARY KEY (what, key))"
            )

    def _conn(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self.url, autocommit=True)
        conn.execute(f'SET search_path TO "{self.schema}"')
        return conn

    def record(self, what: str, key: str | None, detail: Any = None) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO ledger_calls (what, key) VALUES (%s, %s)", (what, key))
            conn.execute(
                "INSERT INTO ledger_effects (what, key, detail) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (what, key, str(detail)),
            )

    def calls(self) -> list[tuple[str, str | None]]:
        with self._conn() as conn:
            return [
                (r[0], r[1])
                for r in conn.execute("SELECT what, key FROM ledger_calls ORDER BY id").fetchall()
            ]

    def effects(self) -> list[tuple[str, str | None]]:
        with self._conn() as conn:
            return [
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT what, key FROM ledger_effects ORDER BY what"
                ).fetchall()
            ]


LEDGER: Any = ListLedger()
FAILING_UNDOS: set[str] = set()
LAST_CALL: list[str] = [""]  # name of the last undo/activity entered (for kill points)


def _undo(what: str, idempotency_key: str, detail: Any) -> dict[str, Any]:
    LAST_CALL[0] = what
    maybe_kill(f"{what}:enter")
    if what in FAILING_UNDOS:
        LEDGER.record(what + ":failed", idempotency_key)
        raise ConnectionError(f"{what} service unavailable")
    LEDGER.record(what, idempotency_key, detail)
    maybe_kill(f"{what}:exit")
    return {"undone": what}


def release(reservation_id: str, idempotency_key: str) -> dict[str, Any]:
    """Undo of reserve_inventory."""
    return _undo("release", idempotency_key, reservation_id)


def refund(charge_id: str, idempotency_key: str) -> dict[str, Any]:
    """Undo of charge_card."""
    return _undo("refund", idempotency_key, charge_id)


def retract(message_id: str, idempotency_key: str) -> dict[str, Any]:
    """Undo of send_confirmation."""
    return _undo("retract", idempotency_key, message_id)


def _charge_api(amount: int, *, idempotency_key: str) -> dict[str, Any]:
    LAST_CALL[0] = "charge_api"
    LEDGER.record("charge_api", idempotency_key, amount)
    maybe_kill("charge_api:exit")
    return {"id": "ch_" + idempotency_key[-8:], "amount": amount}


charge_api = activity(_charge_api, name="charge_api")


class OrderState(SagaState, total=False):
    order_id: str
    amount: int
    reservation_id: str
    charge_id: str
    message_id: str
    shipped: bool


class PlainOrderState(TypedDict, total=False):
    order_id: str
    amount: int
    reservation_id: str
    charge_id: str
    shipped: bool


@compensable(undo=release, args=lambda s, out: {"reservation_id": out["reservation_id"]})
def reserve_inventory(state: OrderState) -> dict[str, Any]:
    LEDGER.record("reserve", state["order_id"])
    return {"reservation_id": "res-" + state["order_id"]}


@compensable(undo=refund, args=lambda s, out: {"charge_id": out["charge_id"]})
def charge_card(state: OrderState) -> dict[str, Any]:
    receipt = charge_api(state.get("amount", 100))
    return {"charge_id": receipt["id"]}


@compensable(undo=retract, args=lambda s, out: {"message_id": out["message_id"]})
def send_confirmation(state: OrderState) -> dict[str, Any]:
    LEDGER.record("confirm", state["order_id"])
    return {"message_id": "msg-" + state["order_id"]}


def ship(state: OrderState) -> dict[str, Any]:
    maybe_kill("ship:enter")
    LEDGER.record("ship", state["order_id"])
    raise RuntimeError("carrier API down")


def reviewed_order(
    review: Any,
    *,
    state: type = OrderState,
    review_retry: RetryPolicy | None = None,
    ship_retry: RetryPolicy | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """``reserve_inventory -> charge_card -> review -> ship``, not yet wired for compensation."""
    builder = StateGraph(state)
    builder.add_node("reserve_inventory", reserve_inventory)
    builder.add_node("charge_card", charge_card)
    builder.add_node("review", review, retry_policy=review_retry)
    builder.add_node("ship", ship, retry_policy=ship_retry)
    chain = [START, "reserve_inventory", "charge_card", "review", "ship", END]
    for a, b in itertools.pairwise(chain):
        builder.add_edge(a, b)
    return builder


def build_order_graph(
    *,
    steps: tuple[str, ...] = ("reserve_inventory", "charge_card"),
    state: type = OrderState,
    **compensation: Any,
) -> StateGraph[Any, Any, Any, Any]:
    """The order saga with ``steps`` before ``ship``, wired for compensation."""
    funcs = {
        "reserve_inventory": reserve_inventory,
        "charge_card": charge_card,
        "send_confirmation": send_confirmation,
    }
    builder = StateGraph(state)
    for name in steps:
        builder.add_node(name, funcs[name])
    # ship is retried once by its own policy before compensation starts
    retry = RetryPolicy(max_attempts=2, initial_interval=0, retry_on=RuntimeError)
    builder.add_node("ship", ship, retry_policy=retry)
    chain = [START, *steps, "ship", END]
    for a, b in itertools.pairwise(chain):
        builder.add_edge(a, b)
    compensation.setdefault("sleep", lambda s: None)
    return add_compensation(builder, **compensation)
