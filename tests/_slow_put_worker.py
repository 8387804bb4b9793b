"""Subprocess worker: an activity graph under LangGraph's default durability ("async").

``python -m tests._slow_put_worker <kind> <url> <area> <thread> <folder> <start|resume>``

The graph is ``prep -> charge -> done``. ``prep`` writes ``<folder>/in-prep``
and waits for ``<folder>/go`` (the test slows the saver's puts in between);
``charge`` calls an activity whose side effect appends its idempotency key to
``<folder>/calls`` (flushed to disk before it returns: the test may kill the
worker right after). ``kind`` is one of ``tests/_slow_puts.py``'s saver kinds.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_durable.interrupts import activity
from tests._slow_puts import ASYNC_KINDS, open_async, open_sync


class State(TypedDict, total=False):
    amount: int
    charge_id: str
    done: bool


def graph_for(folder: Path) -> StateGraph[Any]:
    def charge_api(amount: int, *, idempotency_key: str) -> dict[str, str]:
        fd = os.open(folder / "calls", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{idempotency_key}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return {"id": "ch_" + idempotency_key[-8:]}

    charge_once = activity(charge_api, name="charge_api")

    def prep(state: State) -> State:
        (folder / "in-prep").touch()
        deadline = time.monotonic() + 60
        while not (folder / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return {}

    def charge(state: State) -> State:
        return {"charge_id": charge_once(state.get("amount", 1))["id"]}

    def done(state: State) -> State:
        return {"done": True}

    builder = StateGraph(State)
    builder.add_node("prep", prep)
    builder.add_node("charge", charge)
    builder.add_node("done", done)
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "charge")
    builder.add_edge("charge", "done")
    builder.add_edge("done", END)
    return builder


def main(argv: list[str]) -> None:
    kind, url, area, thread, folder, mode = argv
    builder = graph_for(Path(folder))
    config: Any = {"configurable": {"thread_id": thread}}
    inp = {"amount": 5} if mode == "start" else None
    if kind in ASYNC_KINDS:

        async def run() -> None:
            async with open_async(kind, url, area) as saver:
                await builder.compile(checkpointer=saver).ainvoke(inp, config)

        asyncio.run(run())
    else:
        with open_sync(kind, url, area) as saver:
            builder.compile(checkpointer=saver).invoke(inp, config)
    print("finished")


if __name__ == "__main__":
    main(sys.argv[1:])
