"""Subprocess worker for the SIGKILL tests: run one saga thread until done or killed.

``python -m tests._saga_worker <graph> <saver kind> <url> <area> <ledger url> <ledger schema>
<thread>``, with
``LGD_KILL_AT`` naming where to die (see :func:`tests._saga_graphs.maybe_kill`):
``<undo>:enter`` before an undo's side effect, ``<undo>:exit`` after it and
before its result is recorded, ``<name>:recorded`` right after the result is
recorded, ``<undo>:step`` once the compensation step that ran it has streamed
its update, ``ship:enter`` before compensation starts.
"""

from __future__ import annotations

import sys
from typing import Any

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts._activity_store import ACTIVITY_CHANNEL
from tests import _saga_graphs as g
from tests._saga_savers import open_saver

UNDO_ORDER = ["retract", "refund", "release"]  # newest first


def install_recorded_hook(saver: Any) -> None:
    """Make the saver die right after it records an activity result, if asked."""
    cls = type(saver)

    def put_writes(self: Any, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        cls.put_writes(self, config, writes, task_id, task_path)
        if any(c == ACTIVITY_CHANNEL for c, _ in writes):
            g.maybe_kill(f"{g.LAST_CALL[0]}:recorded")

    def put_activity(self: Any, **kw: Any) -> Any:
        rec = cls.put_activity(self, **kw)
        g.maybe_kill(f"{g.LAST_CALL[0]}:recorded")
        return rec

    attrs: dict[str, Any] = {"put_writes": put_writes}
    if hasattr(cls, "put_activity"):
        attrs["put_activity"] = put_activity
    saver.__class__ = type(f"Killing{cls.__name__}", (cls,), attrs)
    store = getattr(saver, "activities", None)
    if store is not None and hasattr(store, "put_activity"):
        # the saver's activity store records the result: die right after it
        stored = store.put_activity

        def put_activity_of_store(**kw: Any) -> Any:
            rec = stored(**kw)
            g.maybe_kill(f"{g.LAST_CALL[0]}:recorded")
            return rec

        store.put_activity = put_activity_of_store


def order_graph() -> Any:
    """Three compensable steps, then ship fails."""
    return g.build_order_graph(steps=("reserve_inventory", "charge_card", "send_confirmation"))


def activity_graph() -> Any:
    """One node charges through an activity; the next one completes the order."""

    def charge(state: g.PlainOrderState) -> dict[str, Any]:
        return {"charge_id": g.charge_api(state.get("amount", 1))["id"]}

    def done(state: g.PlainOrderState) -> dict[str, Any]:
        return {"shipped": True}

    builder = StateGraph(g.PlainOrderState)
    builder.add_node("charge", charge)
    builder.add_node("done", done)
    builder.add_edge(START, "charge")
    builder.add_edge("charge", "done")
    builder.add_edge("done", END)
    return builder


def run(graph_name: str, saver: Any, thread: str, *, start: bool) -> Any:
    builder = order_graph() if graph_name == "order" else activity_graph()
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    inp = {"order_id": thread, "amount": 5} if start else None
    # both graphs run under LangGraph's default durability ("async"): an activity waits until
    # its step's checkpoint is stored, so a kill cannot leave the retried step a new key
    undone = 0
    for update in graph.stream(inp, config, stream_mode="updates"):
        for ops in (v.get("saga") for k, v in update.items() if k == "__compensate__" and v):
            for op in ops if isinstance(ops, list) else [ops]:
                if op.get("op") == "step" and op["fields"].get("status") == "compensated":
                    g.maybe_kill(f"{UNDO_ORDER[undone]}:step")
                    undone += 1
    return graph.get_state(config).values


def main(argv: list[str]) -> None:
    graph_name, kind, url, area, ledger_url, ledger_schema, thread = argv
    g.LEDGER = g.PgLedger(ledger_url, ledger_schema)
    with open_saver(kind, url, area) as saver:
        install_recorded_hook(saver)
        run(graph_name, saver, thread, start=True)
    print("finished without being killed")


if __name__ == "__main__":
    main(sys.argv[1:])
