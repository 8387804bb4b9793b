"""A separate process for the approval crash tests: ``python -m tests._approval_worker CMD``.

Commands (JSON on argv[2]): ``start`` runs the 15-step workflow until it pauses
for approval and exits; ``approve`` approves it from a fresh process with a
clock 20 minutes later; ``sweep`` runs one sweep and exits (or, with
``hang_in_review``, is killed by the test mid-resume; with ``kill_before_decision``,
kills itself right after its claim, before the timeout decision is written).
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
from datetime import datetime, timedelta
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    ApprovalSweeper,
    approve,
    request_approval,
)
from tests._approval_savers import open_sync


class Clock:
    def __init__(self, at: str) -> None:
        self.at = datetime.fromisoformat(at)

    def __call__(self) -> datetime:
        return self.at


class FlowState(TypedDict, total=False):
    steps: Annotated[list[dict[str, Any]], operator.add]
    decision: dict[str, Any]


APPROVAL_STEP = 8
STEPS = 15


def build(
    saver: Any,
    *,
    hang_marker: str | None = None,
    effects_table: str | None = None,
    hang_step: int = APPROVAL_STEP,
) -> Any:
    """A 15-step workflow; step 8 waits for approval. Each step records its work.

    With ``hang_marker``, step ``hang_step`` (the approval step unless told)
    writes the marker and sleeps, for the test to SIGKILL the process there.
    """

    def make_step(i: int) -> Any:
        def step(state: FlowState) -> dict[str, Any]:
            out: dict[str, Any] = {"steps": [{"step": i, "seen": len(state.get("steps", []))}]}
            if i == APPROVAL_STEP:
                d = request_approval(
                    {"step": i, "summary": [s["step"] for s in state["steps"]]},
                    timeout=timedelta(hours=1),
                    on_timeout="reject",
                )
                out["decision"] = d.model_dump(mode="json")
            if i == hang_step and hang_marker:
                # the test SIGKILLs this process here: decided, resuming, not done
                with open(hang_marker, "w") as f:
                    f.write(str(os.getpid()))
                time.sleep(120)
            if i == APPROVAL_STEP + 1 and effects_table:
                record_effect(saver, effects_table, state)
            return out

        return step

    builder = StateGraph(FlowState)
    for i in range(1, STEPS + 1):
        builder.add_node(f"s{i}", make_step(i))
        builder.add_edge(START if i == 1 else f"s{i - 1}", f"s{i}")
    builder.add_edge(f"s{STEPS}", END)
    return builder.compile(checkpointer=saver)


def record_effect(saver: Any, table: str, state: Any) -> None:
    """Count one side effect in a Postgres table (the test reads the count)."""
    import psycopg
    from psycopg import sql

    schema, name = table.split(".")
    with psycopg.connect(os.environ["EFFECTS_URL"], autocommit=True) as conn:
        if "amount" in state:
            conn.execute(
                sql.SQL("INSERT INTO {} (thread_id, amount) VALUES ('', %s)").format(
                    sql.Identifier(schema, name)
                ),
                (state["amount"],),
            )
        else:
            conn.execute(
                sql.SQL("INSERT INTO {} (n) VALUES (1)").format(sql.Identifier(schema, name))
            )


def main() -> None:
    cmd, args = sys.argv[1], json.loads(sys.argv[2])
    clock = Clock(args["now"])
    config = {"configurable": {"thread_id": args["thread_id"], CLOCK_CONFIG_KEY: clock}}
    with open_sync(args["backend"], args["url"], args["options"]) as saver:
        graph = build(
            saver,
            hang_marker=args.get("hang_marker"),
            effects_table=args.get("effects_table"),
            hang_step=args.get("hang_step", APPROVAL_STEP),
        )
        if cmd == "start":
            out = graph.invoke({"steps": []}, config)
            print(json.dumps({"paused": "__interrupt__" in out, "steps": len(out["steps"])}))
        elif cmd == "approve":
            out = approve(graph, config, by=args["by"], comment="fine", clock=clock)
            print(json.dumps({"steps": out["steps"], "decision": out["decision"]}))
        elif cmd == "sweep_reviews":
            from tests._approval_graphs import review_graph

            table = args["effects_table"]
            reviews = review_graph(saver, after=lambda state: record_effect(saver, table, state))
            sweeper = ApprovalSweeper(
                reviews,
                clock=clock,
                page_size=args.get("page_size", 20),
                concurrency=args.get("concurrency", 4),
            )
            print(json.dumps({"resolved": sweeper.run_once()}))
        elif cmd == "sweep":
            if args.get("kill_before_decision"):
                from tests._crash import KillAt, arm

                # SIGKILL at the first decision write: claimed, nothing decided or resumed
                arm(saver, KillAt("record_decision", 1, 0.0))
            sweeper = ApprovalSweeper(
                graph,
                clock=clock,
                lease=timedelta(seconds=args.get("lease_s", 300)),
                durability=args.get("durability"),
            )
            print(json.dumps({"resolved": sweeper.run_once()}))


if __name__ == "__main__":
    main()
