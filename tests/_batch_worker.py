"""A separate process for the batch crash test: ``python -m tests._batch_worker CMD ARGS``.

Commands (JSON on argv[2]):

``start_and_decide``
    Starts the 5-order batch, decides ``o1``, ``o2`` (approve) in one call, then
    ``o3`` (reject) in a second call. With ``kill_inside`` the process SIGKILLs
    itself inside that second call, after ``o3``'s compare-and-set returned and
    before the call counts the batch's decisions; otherwise it prints
    ``decided``, then waits for the test to SIGKILL it (connections open).
``decide``
    Decides ``args["decisions"]`` from a fresh process and prints the result.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from datetime import datetime
from typing import Any

from langgraph_durable.interrupts import CLOCK_CONFIG_KEY, decide
from tests._approval_graphs import order_graph, orders
from tests._approval_savers import open_sync
from tests._parts import part_of


class Clock:
    def __init__(self, at: str) -> None:
        self.at = datetime.fromisoformat(at)

    def __call__(self) -> datetime:
        return self.at


def main() -> None:
    cmd, args = sys.argv[1], json.loads(sys.argv[2])
    clock = Clock(args["now"])
    config: dict[str, Any] = {
        "configurable": {"thread_id": args["thread_id"], CLOCK_CONFIG_KEY: clock}
    }
    with open_sync(args["backend"], args["url"], args["options"]) as saver:
        graph = order_graph(saver)
        if cmd == "start_and_decide":
            graph.invoke({"orders": orders(5)}, config)
            first = decide(graph, config, {"o1": True, "o2": True}, by="alice", clock=clock)
            print(json.dumps({"applied": first.applied}), flush=True)
            if args.get("kill_inside"):
                # die inside the next call, after its compare-and-set of o3 returned and
                # before it counts the batch's decisions (and could complete it)
                count = part_of(saver, "decisions").count_decisions

                def die_at_count(*a: Any, **kw: Any) -> Any:
                    os.kill(os.getpid(), signal.SIGKILL)
                    return count(*a, **kw)

                part_of(saver, "decisions").count_decisions = die_at_count
                decide(graph, config, {"o3": False}, by="alice", clock=clock)
                print(json.dumps({"error": "survived the kill"}), flush=True)
                return
            second = decide(graph, config, {"o3": False}, by="alice", clock=clock)
            print(json.dumps({"applied": second.applied, "decided": True}), flush=True)
            time.sleep(120)  # the test SIGKILLs this process here
        elif cmd == "decide":
            out = decide(graph, config, args["decisions"], by=args["by"], clock=clock)
            print(
                json.dumps(
                    {"applied": out.applied, "completed": out.completed, "result": out.result},
                    default=str,
                )
            )


if __name__ == "__main__":
    main()
