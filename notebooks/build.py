"""Write the lesson notebooks from the cells below, then run them so outputs are committed.

    python notebooks/build.py            # write and execute every notebook
    python notebooks/build.py 02         # only the ones whose name starts with 02

The test suite runs every committed notebook again (tests/test_notebooks_run.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

STORAGE = '''import os
import warnings
from langgraph_durable.interrupts import start_embedded_postgres

warnings.filterwarnings("ignore", module="platformdirs")

# LANGGRAPH_DURABLE_URL if set, else an embedded PostgreSQL (the `embedded` extra)
URL = os.environ.get("LANGGRAPH_DURABLE_URL") or start_embedded_postgres()[0]
print(URL.split("@")[-1][:60])'''

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}


def notebook(name: str, *cells: tuple[str, str]) -> None:
    NOTEBOOKS[name] = list(cells)


def md(text: str) -> tuple[str, str]:
    return ("markdown", text.strip("\n"))


def code(text: str) -> tuple[str, str]:
    return ("code", text.strip("\n"))


notebook(
    "01_quickstart",
    md("""
# 1. Quick start: a pause that survives the process

A LangGraph agent that calls `interrupt()` stops and waits. Whether the wait survives a process
exit, a deploy or a night depends on the **checkpointer**. This lesson runs a small agent on
`PostgresSaver`, lets it pause, throws the saver (and its connection) away, and resumes the
thread from a brand-new one: only what PostgreSQL stored is left.
"""),
    code(STORAGE),
    md("## A graph that asks before it acts"),
    code('''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    answer: str


def research(state: State) -> dict:
    return {"notes": ["found 3 flights", "cheapest: $412"]}


def ask_human(state: State) -> dict:
    answer = interrupt({"question": "book the $412 flight?"})   # the run pauses here
    return {"answer": answer}


def book(state: State) -> dict:
    return {"notes": [f"booking: {state['answer']}"]}


builder = StateGraph(State)
builder.add_node("research", research)
builder.add_node("ask_human", ask_human)
builder.add_node("book", book)
builder.add_edge(START, "research")
builder.add_edge("research", "ask_human")
builder.add_edge("ask_human", "book")
builder.add_edge("book", END);
'''),
    md("## Run until the pause"),
    code('''
import uuid
from langgraph_durable import PostgresSaver

config = {"configurable": {"thread_id": f"quickstart-{uuid.uuid4().hex[:6]}"}}

with PostgresSaver.from_conn_string(URL) as saver:
    saver.setup()                      # creates or upgrades the tables, safe to repeat
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"notes": []}, config)   # runs research, then pauses in ask_human
    print("paused with:", graph.get_state(config).interrupts[0].value)
    print("next node:", graph.get_state(config).next)
# the saver and its connection are gone now: nothing is held in memory
'''),
    md("""
## Resume from a new saver

This could be another process, another machine, or the same one a day later.
`Command(resume=...)` is what `interrupt()` returns inside `ask_human`.
"""),
    code('''
import time
time.sleep(1)   # the human takes a moment (in production: minutes or days)
with PostgresSaver.from_conn_string(URL) as saver:
    graph = builder.compile(checkpointer=saver)
    final = graph.invoke(Command(resume="yes, book it"), config)
print(final["notes"])
'''),
    md("""
## The async saver inside Jupyter

Jupyter already runs an event loop, so use `await` directly: `AsyncPostgresSaver` shares
the storage and the behaviour of the sync saver.
"""),
    code('''
from langgraph_durable import AsyncPostgresSaver

config2 = {"configurable": {"thread_id": f"quickstart-async-{uuid.uuid4().hex[:6]}"}}
async with AsyncPostgresSaver.from_conn_string(URL) as asaver:
    agraph = builder.compile(checkpointer=asaver)
    await agraph.ainvoke({"notes": []}, config2)
    done = await agraph.ainvoke(Command(resume="no"), config2)
print(done["notes"])
'''),
    md("""
## What the thread looks like

`thread_timeline` reads a thread back from any saver (no graph needed), and `plot_timeline`
draws it on a time axis: each checkpoint with the nodes that produced it, and the pause, on the
node that paused (`ask_human`), from the moment it asked to the moment the thread resumed.
"""),
    code('''
from langgraph_durable.interrupts import plot_timeline, thread_timeline

with PostgresSaver.from_conn_string(URL) as saver:
    entries = thread_timeline(saver, config["configurable"]["thread_id"])
for e in entries:
    print(e.step, e.nodes, [i.interrupt_id[:8] for i in e.interrupts])
plot_timeline(entries, title="quickstart thread");
'''),
)

notebook(
    "02_approval_timeouts",
    md("""
# 2. Approvals with timeouts, escalation, an inbox and a sweeper

`interrupt()` waits forever. `request_approval` waits **with a rule**: a deadline, who is asked,
and what happens when nobody answers (`on_timeout`: reject, approve, or `Escalate` to the next
approver). The deadline is stored in the checkpoint and indexed by our savers, so an inbox and a
sweeper can find waiting and overdue approvals without scanning every thread.

The deadlines here are seconds, so the lesson runs in seconds; in production they are minutes
or days. (Tests pass a `clock=` to every helper and move time instead of waiting.)
"""),
    code(STORAGE),
    code('''
from datetime import timedelta
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

import time
from contextlib import ExitStack

from langgraph_durable import ApprovalSweeper, PostgresSaver, approve, pending_approvals, request_approval
from langgraph_durable.interrupts import Escalate, approval_health

WAIT = timedelta(seconds=2)   # how long each approver has


class Refund(TypedDict, total=False):
    amount: int
    outcome: str


def build(saver, on_timeout="reject"):
    def review(state):
        d = request_approval({"action": "refund", "amount": state["amount"]},
                             timeout=WAIT, on_timeout=on_timeout, approvers=["ops"])
        who = "the timeout rule" if d.timed_out else d.by
        verdict = "approved" if d.approved else "rejected"
        levels = len(d.escalations)
        return {"outcome": f"{verdict} by {who} after {levels} escalation(s)"}
    g = StateGraph(Refund)
    g.add_node("review", review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=saver)


stack = ExitStack()   # closes the saver in the last cell
saver = stack.enter_context(PostgresSaver.from_conn_string(URL))
saver.setup()
'''),
    md("## An approval, the inbox, and a decision"),
    code('''
import uuid
run = uuid.uuid4().hex[:6]
graph = build(saver)
t1 = {"configurable": {"thread_id": f"refund-a-{run}"}}
graph.invoke({"amount": 120}, t1)

for item in pending_approvals(saver, approver="ops"):
    if item.thread_id.endswith(run):
        print(item.thread_id, item.request, "deadline", item.deadline.strftime("%H:%M:%S UTC"))
'''),
    code('''
result = approve(graph, t1, by="alice", roles=["ops"], comment="looks right")
print(result["outcome"])
'''),
    md("""
## Nobody answers: the sweeper applies the default

`ApprovalSweeper.run_once()` claims every approval past its deadline (exactly once, even with
several sweepers in several processes), applies `on_timeout` and resumes the thread.
`approval_health` tells healthy waiting from a stuck sweeper. In production a worker runs the
sweeper in a loop: `langgraph-durable worker --graph pkg.mod:graph --url URL`.
"""),
    code('''
t2 = {"configurable": {"thread_id": f"refund-b-{run}"}}
graph.invoke({"amount": 900}, t2)
time.sleep(WAIT.total_seconds() + 0.5)   # nobody answers in time
print(approval_health(saver))
print("resolved:", ApprovalSweeper(graph).run_once())
print(graph.get_state(t2).values["outcome"])
'''),
    md("""
## Escalation

On timeout, `Escalate` asks the next approver with a new deadline; when the last level times
out, `then` applies. The history is in `Decision.escalations`.
"""),
    code('''
esc = build(saver, on_timeout=Escalate(to="manager", timeout=WAIT, then="reject"))
t3 = {"configurable": {"thread_id": f"refund-c-{run}"}}
esc.invoke({"amount": 5000}, t3)
time.sleep(WAIT.total_seconds() + 0.5)
ApprovalSweeper(esc).run_once()          # ops did not answer: escalates to the manager
print([(i.approvers, i.escalation_level) for i in pending_approvals(saver)
       if i.thread_id == t3["configurable"]["thread_id"]])
time.sleep(WAIT.total_seconds() + 0.5)
ApprovalSweeper(esc).run_once()          # the manager did not answer either
print(esc.get_state(t3).values["outcome"])
'''),
    md("""
The picture: the first pause (asked ops, its deadline), the escalation, the second pause (asked
the manager, its deadline), the rejection by the timeout rule and the resume.
"""),
    code('''
from langgraph_durable.interrupts import plot_timeline, thread_timeline
plot_timeline(thread_timeline(saver, t3["configurable"]["thread_id"]),
              title="asked ops, escalated to the manager, rejected by the timeout rule");
'''),
    code("stack.close()   # closes the saver and its connection"),
)

notebook(
    "03_partial_batches",
    md("""
# 3. Partial batches and approvals that apply only to what was shown

Five orders go out for approval; three come back approved, two bounce, and the answers arrive
hours apart from different people. `request_batch_approval` keeps each item's decision on its
own, waits only for the items still open, and returns the split when all are decided (or the
deadline passes). And if an item changed while it waited, the old decision is not applied.
"""),
    code(STORAGE),
    code('''
import uuid
from datetime import timedelta
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from contextlib import ExitStack

from langgraph_durable import PostgresSaver, decide, pending_approvals, request_batch_approval


class Orders(TypedDict, total=False):
    orders: list[dict]
    to_ship: list[dict]
    to_refund: list[dict]


def review_orders(state):
    result = request_batch_approval(state["orders"], key=lambda o: o["id"],
                                    timeout=timedelta(hours=4), on_timeout="reject")
    return {"to_ship": result.approved, "to_refund": result.rejected}


g = StateGraph(Orders)
g.add_node("review_orders", review_orders)
g.add_edge(START, "review_orders")
g.add_edge("review_orders", END)

stack = ExitStack()   # closes the saver in the last cell
saver = stack.enter_context(PostgresSaver.from_conn_string(URL))
saver.setup()
graph = g.compile(checkpointer=saver)
orders = [{"id": f"o{i}", "price": 10 * i} for i in range(1, 6)]
config = {"configurable": {"thread_id": f"batch-{uuid.uuid4().hex[:6]}"}}
graph.invoke({"orders": orders}, config);
'''),
    md("## Alice decides three items; the thread keeps waiting for the other two"),
    code('''
print(decide(graph, config, {"o1": True, "o2": True, "o3": False}, by="alice"))
(item,) = [i for i in pending_approvals(saver) if i.thread_id == config["configurable"]["thread_id"]]
for it in item.items:
    state = f"{'approved' if it.approved else 'rejected'} by {it.by}" if it.decided else "open"
    print(it.key, it.item, state)
'''),
    md("## Hours later Bob decides the rest; the node completes with the split"),
    code('''
decide(graph, config, {"o4": True, "o5": False}, by="bob")
state = graph.get_state(config).values
print("ship:  ", [o["id"] for o in state["to_ship"]])
print("refund:", [o["id"] for o in state["to_refund"]])
'''),
    md("""
## What was approved is what was shown

Each item's payload is fingerprinted when it is asked. If the node re-runs and computes a
different payload, the decision about the old one is not applied: by default the item is asked
again (`on_stale="reask"`), or `on_stale="raise"` raises `StaleApproval` with both payloads.
"""),
    code('''
prices = {"p1": 100}

def review_price(state):
    item = {"id": "p1", "price": prices["p1"]}     # read fresh on every run of the node
    result = request_batch_approval([item], key=lambda o: o["id"])
    return {"to_ship": result.approved, "to_refund": result.rejected}

g2 = StateGraph(Orders)
g2.add_node("review_price", review_price)
g2.add_edge(START, "review_price")
g2.add_edge("review_price", END)
graph2 = g2.compile(checkpointer=saver)
c2 = {"configurable": {"thread_id": f"stale-{uuid.uuid4().hex[:6]}"}}
graph2.invoke({"orders": []}, c2)

prices["p1"] = 180                                 # the price changes during the wait
decide(graph2, c2, {"p1": True}, by="alice")      # alice approved what she saw: 100
(again,) = [i for i in pending_approvals(saver) if i.thread_id == c2["configurable"]["thread_id"]]
print("asked again with:", again.request)
'''),
    code("stack.close()   # closes the saver and its connection"),
)
notebook(
    "04_compensation",
    md("""
# 4. Compensation (sagas), idempotent activities and the undo report

An order workflow reserves stock, charges the card, then ships. If shipping fails for good,
rolling *everything* back is not possible (the charge happened) and ignoring it is wrong (the
customer paid for nothing). `add_compensation` runs the recorded **undos** of the steps that
committed, newest first, each exactly once, and when an undo itself keeps failing it pauses on a
`UndoReport` a human can act on. `activity` makes a side effect idempotent: the same key on
every retry of the same step, and a recorded result instead of a second call.
"""),
    code(STORAGE),
    code("""
import uuid
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from contextlib import ExitStack

from langgraph_durable import PostgresSaver, activity, add_compensation, compensable
from langgraph_durable.interrupts import Compensate, SagaState, UndoReport, resume_undo

LOG: list[str] = []          # what reached the outside world
REFUND_DOWN = {"on": False}  # flip to make the refund service fail


def stripe_charge(amount: int, *, idempotency_key: str) -> dict:
    LOG.append(f"charge {amount} key={idempotency_key[-6:]}")
    return {"id": "ch_" + idempotency_key[-6:]}

charge = activity(stripe_charge)        # the same key on every re-execution of the step


def release_stock(reservation_id: str, idempotency_key: str) -> None:
    LOG.append(f"release {reservation_id}")


def refund_card(charge_id: str, idempotency_key: str) -> None:
    if REFUND_DOWN["on"]:
        LOG.append("refund failed")
        raise ConnectionError("refund service unavailable")
    LOG.append(f"refund {charge_id}")


class Order(SagaState, total=False):
    order_id: str
    amount: int
    reservation_id: str
    charge_id: str


@compensable(undo=release_stock, args=lambda s, out: {"reservation_id": out["reservation_id"]})
def reserve_inventory(state):
    LOG.append("reserve")
    return {"reservation_id": "res-" + state["order_id"]}


@compensable(undo=refund_card, args=lambda s, out: {"charge_id": out["charge_id"]})
def charge_card(state):
    return {"charge_id": charge(state["amount"])["id"]}


def ship(state):
    raise Compensate("carrier refused the parcel")


builder = StateGraph(Order)
builder.add_node("reserve_inventory", reserve_inventory)
builder.add_node("charge_card", charge_card)
builder.add_node("ship", ship)
builder.add_edge(START, "reserve_inventory")
builder.add_edge("reserve_inventory", "charge_card")
builder.add_edge("charge_card", "ship")
builder.add_edge("ship", END)

stack = ExitStack()   # closes the saver in the last cell
saver = stack.enter_context(PostgresSaver.from_conn_string(URL))
saver.setup()
graph = add_compensation(builder, max_attempts=3, sleep=lambda s: None).compile(checkpointer=saver)
"""),
    md("## Shipping fails: refund, then release, each once"),
    code("""
config = {"configurable": {"thread_id": f"order-{uuid.uuid4().hex[:6]}"}}
final = graph.invoke({"order_id": "A-7", "amount": 42}, config)
print(LOG)
print(final["saga"]["status"], "-", final["saga"]["reason"])
for step in final["saga"]["steps"]:
    print(" ", step["node"], step["status"])
"""),
    md("""
## An undo that keeps failing: the undo report

The refund service is down. The undo is retried with backoff (`max_attempts=3`), then the
thread pauses on an interrupt whose value is an `UndoReport`: what failed and why (type and
message, not a stack trace), what committed, what was compensated, what remains, and the actions
available. The report is JSON: an operator UI can show it as it is.
"""),
    code("""
LOG.clear()
REFUND_DOWN["on"] = True
config2 = {"configurable": {"thread_id": f"order-{uuid.uuid4().hex[:6]}"}}
graph.invoke({"order_id": "B-9", "amount": 99}, config2)
report = UndoReport.from_interrupt(graph.get_state(config2).interrupts[0])
print(LOG)
print(report.model_dump_json(indent=1)[:900])
"""),
    md("""
## A human decides: `retry`, `skip` or `abort`

Here the operator refunds by hand and answers `skip`: compensation carries on with the next undo
(release the stock), and the report, with the decision, stays in the final state.
"""),
    code("""
import time
time.sleep(1.5)   # the operator reads the report and refunds by hand
final2 = graph.invoke(resume_undo("skip", by="ops@example.com", note="refunded by hand"),
                      config2)
print(LOG)
print(final2["saga"]["status"], [(s["node"], s["status"]) for s in final2["saga"]["steps"]])
stored = UndoReport.model_validate(final2["saga"]["reports"][0])
print("decision:", stored.decision, "by", stored.decided_by, "-", stored.note)
"""),
    code("""
from langgraph_durable.interrupts import plot_timeline, thread_timeline
plot_timeline(thread_timeline(saver, config2["configurable"]["thread_id"]),
              title="an undo fails: the thread pauses on the undo report, the operator skips it");
"""),
    code("stack.close()   # closes the saver and its connection"),
)


notebook(
    "05_migrating_after_deploy",
    md("""
# 5. Migrating paused threads after a deploy

An agent pauses for review. During the wait, a deploy changes how the state is structured:
`price` used to be a number and is now `{"amount", "currency"}`, and the node `review` was renamed
`human_review`. Without help, the resume either crashes deep inside a node or, worse, runs on
old-shape data. Here every checkpoint carries the **schema version** of the code that wrote it,
old ones are upgraded by steps the team writes (lazily on read, or in bulk with `upgrade_all`),
and a checkpoint that cannot be upgraded fails **loudly**.
"""),
    code(STORAGE),
    md("## Version 1 of the app pauses at `review`"),
    code('''
import uuid
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable import PostgresSaver, StateMigrations, upgrade_all
from langgraph_durable.migrations import SchemaVersionError


class StateV1(TypedDict, total=False):
    item: str
    price: float
    status: str


def review_v1(state):
    ok = interrupt({"check": state["item"], "price": state["price"]})
    return {"status": "approved" if ok else "rejected"}


g1 = StateGraph(StateV1)
g1.add_node("review", review_v1)
g1.add_edge(START, "review")
g1.add_edge("review", END)

v1 = StateMigrations(version=1)
run = uuid.uuid4().hex[:6]
SCHEMA = f"lesson05_{run}"   # a schema of its own: upgrade_all sees only this lesson's threads
threads = [f"deploy-{run}-{i}" for i in range(3)]
with PostgresSaver.from_conn_string(URL, schema=SCHEMA, migrations=v1) as saver:
    saver.setup()
    app_v1 = g1.compile(checkpointer=saver)
    for t in threads:
        app_v1.invoke({"item": "espresso machine", "price": 240.0},
                      {"configurable": {"thread_id": t}})
    config = {"configurable": {"thread_id": threads[0]}}
    tup = saver.get_tuple(config)
    print("stored by v1:", tup.checkpoint["channel_values"]["price"],
          "schema_version =", saver.schema_version(config))
'''),
    md("""
## Version 2 is deployed while they wait

The new code declares version 2, one step from 1 to 2 that reshapes `price`, and the node rename
in the same step. The chain is checked when the saver is built: a gap is an error at start-up,
not when some thread resumes at 3 a.m.
"""),
    code('''
class StateV2(TypedDict, total=False):
    item: str
    price: dict
    status: str


def human_review(state):
    ok = interrupt({"check": state["item"], "price": state["price"]})
    return {"status": f"{'approved' if ok else 'rejected'} at "
                      f"{state['price']['amount']} {state['price']['currency']}"}


g2 = StateGraph(StateV2)
g2.add_node("human_review", human_review)
g2.add_edge(START, "human_review")
g2.add_edge("human_review", END)

v2 = StateMigrations(version=2)

@v2.upgrade(from_version=1)
def price_to_money(values: dict) -> dict:
    values["price"] = {"amount": values["price"], "currency": "USD"}
    return values

v2.rename_node(from_version=1, old="review", new="human_review")
'''),
    md("## Lazily, on read: the paused thread resumes at the renamed node with upgraded state"),
    code('''
with PostgresSaver.from_conn_string(URL, schema=SCHEMA, migrations=v2) as saver:
    app_v2 = g2.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": threads[0]}}
    print("waiting at:", app_v2.get_state(config).next)
    final = app_v2.invoke(Command(resume=True), config)
    print(final["status"])
    print("new checkpoint tagged:", saver.schema_version(config))
'''),
    md("""
## Eagerly, in bulk: `upgrade_all`

After a deploy, rewrite every thread that is behind (the latest checkpoint of each; or every
checkpoint with `all_history=True`), in batches, resumable, safe to run in several processes.
The command line does the same: `langgraph-durable migrate --url URL --migrations pkg.mod:v2`.
"""),
    code('''
with PostgresSaver.from_conn_string(URL, schema=SCHEMA, migrations=v2) as saver:
    for v in upgrade_all(saver, v2, dry_run=True).dry_run_versions:
        print(f"dry run: {v.would_change} thread(s) on version {v.schema_version} would change;"
              f" {v.sampled} sampled, {len(v.sample_failures)} failed")
    result = upgrade_all(saver, v2)
    print("upgraded:", result.upgraded, "by stored version:", result.by_version,
          "failed:", result.failed)
'''),
    md("""
## The loud failure

A rolled-back deploy (code at version 1 reading checkpoints written by version 2), or a version
with no path, raises `SchemaVersionError` naming the thread and both versions. Nothing is
silently dropped, and the stored checkpoint is left as it was.
"""),
    code('''
with PostgresSaver.from_conn_string(URL, schema=SCHEMA, migrations=v1) as saver:
    try:
        saver.get_tuple({"configurable": {"thread_id": threads[0]}})
    except SchemaVersionError as exc:
        print(type(exc).__name__ + ":", exc)
'''),
)


def build(names: list[str]) -> None:
    for name, cells in NOTEBOOKS.items():
        if names and not any(name.startswith(n) for n in names):
            continue
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "markdown"
                    else nbformat.v4.new_code_cell(src) for kind, src in cells]
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(HERE)}}).execute()
        path = HERE / f"{name}.ipynb"
        nbformat.write(nb, path)
        print("wrote", path.name)


if __name__ == "__main__":
    build(sys.argv[1:])
