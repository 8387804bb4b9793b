"""The story ``langgraph-durable demo`` tells, one role per process.

A refund workflow gathers facts over several steps and pauses for a human's
approval with a deadline. Each role below runs in its own Python process, so
what survives between them is only what the saver stored:

* ``agent``: starts the run; it pauses at the approval and the process exits.
* ``operator``: twenty (simulated) minutes later, a fresh process that does not
  even build the workflow (think: an approval UI) reads the inbox and records
  alice's approval with the saver alone (``approve(saver, ..., resume=False)``).
* ``worker``: a third fresh process, the worker, sweeps: it finds the recorded
  decision, resumes the run with it and the run completes; then it reads the
  thread back and checks that every fact gathered before the pause, the
  decision and the outcome are all there.
* ``sweeper`` (``--timeout-demo``): nobody answers; past the deadline the
  sweeper applies the default (reject) and the run completes.
* ``audit``: a fresh process reads the thread back, as the worker does.

Run as ``python -m langgraph_durable.interrupts._demo ROLE --thread ID`` with the
address in ``LANGGRAPH_DURABLE_URL`` (or ``--url``): ``langgraph-durable demo``
passes one with a schema or prefix of the demo's own.
"""

from __future__ import annotations

import argparse
import operator
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    ApprovalSweeper,
    approve,
    pending_approvals,
    request_approval,
)
from langgraph_durable.interrupts._clock import Clock, utc_now

APPROVAL_TIMEOUT = timedelta(minutes=30)
GATHER_STEPS = (
    ("load_order", "order A-1042: 2 x espresso machine, paid $240.00 by card"),
    ("check_delivery", "carrier says: delivered 2026-11-20, one unit damaged in transit"),
    ("check_customer", "customer since 2019, 14 orders, 0 refunds so far"),
    ("check_policy", "policy R-7: damaged goods refundable within 30 days"),
    ("compute_refund", "refund proposed: $120.00 (one unit)"),
)


class RefundState(TypedDict, total=False):
    """The workflow's state: the facts pile up, then the decision and the outcome."""

    order_id: str
    facts: Annotated[list[str], operator.add]
    decision: dict[str, Any]
    outcome: str


def _say(text: str) -> None:
    print(text, flush=True)


def _gather(index: int, name: str, fact: str) -> Any:
    def node(state: RefundState) -> dict[str, Any]:
        _say(f"  step {index + 1}/{len(GATHER_STEPS)} {name}: {fact}")
        return {"facts": [fact]}

    node.__name__ = name
    return node


def review(state: RefundState) -> dict[str, Any]:
    """Ask a human (ops) to approve the refund; reject it if nobody answers in time."""
    decision = request_approval(
        {"action": "refund", "order": state["order_id"], "amount": 120.00, "currency": "USD"},
        timeout=APPROVAL_TIMEOUT,
        on_timeout="reject",
        approvers=["ops"],
    )
    return {"decision": decision.model_dump(mode="json")}


def settle(state: RefundState) -> dict[str, Any]:
    """Issue the refund, or record why not."""
    d = state["decision"]
    if d["approved"]:
        outcome = f"refund of $120.00 issued (approved by {d['by']})"
    elif d["timed_out"]:
        outcome = "refund not issued: nobody answered in time, the default (reject) applied"
    else:
        outcome = f"refund not issued (rejected by {d['by']})"
    _say(f"  settle: {outcome}")
    return {"outcome": outcome}


def build_graph(saver: Any) -> Any:
    """The refund workflow compiled with ``saver``."""
    builder = StateGraph(RefundState)
    previous = START
    for i, (name, fact) in enumerate(GATHER_STEPS):
        builder.add_node(name, _gather(i, name, fact))
        builder.add_edge(previous, name)
        previous = name
    builder.add_node("review", review)
    builder.add_node("settle", settle)
    builder.add_edge(previous, "review")
    builder.add_edge("review", "settle")
    builder.add_edge("settle", END)
    return builder.compile(checkpointer=saver)


@contextmanager
def open_saver(url: str) -> Iterator[Any]:
    """The sync saver for ``url``, set up."""
    from langgraph_durable.interrupts._cli_common import open_saver as _open

    with _open(url, check_setup=False) as saver:
        saver.setup()
        yield saver


def _clock(minutes_later: float) -> Clock:
    return lambda: utc_now() + timedelta(minutes=minutes_later)


def run_agent(url: str, thread: str) -> int:
    with open_saver(url) as saver:
        graph = build_graph(saver)
        config = {"configurable": {"thread_id": thread}}
        _say(f"[agent, pid {os.getpid()}] starting the refund workflow on thread {thread!r}")
        graph.invoke({"order_id": "A-1042", "facts": []}, config)
        state = graph.get_state(config)
        (intr,) = state.interrupts
        deadline = intr.value["__durable_wait__"]["deadline"]
        _say(f"  paused at {list(state.next)}: waiting for approval by ops until {deadline}")
        _say("  the agent process exits now; nothing is kept in memory")
    return 0


def run_operator(url: str, thread: str, minutes_later: float) -> int:
    clock = _clock(minutes_later)
    with open_saver(url) as saver:
        _say(
            f"[operator, pid {os.getpid()}] {minutes_later:g} minutes later, "
            "a fresh process that never builds the workflow opens the inbox:"
        )
        inbox = [i for i in pending_approvals(saver, approver="ops") if i.thread_id == thread]
        if not inbox:
            _say("  the inbox is empty: the approval was lost")
            return 1
        for item in inbox:
            _say(
                f"  - thread {item.thread_id}: {item.request} (deadline {item.deadline:%H:%M} UTC)"
            )
        decision = approve(
            saver,
            {"configurable": {"thread_id": thread}},
            by="alice",
            roles=["ops"],
            comment="damage confirmed by carrier",
            clock=clock,
            resume=False,
        )
        _say(
            f"  alice (role ops) approves at {decision.at:%H:%M} UTC: the decision is recorded"
            " (exactly once); this process exits without running the workflow"
        )
    return 0


def run_worker(url: str, thread: str, minutes_later: float) -> int:
    clock = _clock(minutes_later)
    with open_saver(url) as saver:
        graph = build_graph(saver)
        _say(f"[worker, pid {os.getpid()}] a third fresh process sweeps for recorded decisions:")
        resumed = ApprovalSweeper(graph, clock=clock).run_once()
        _say(f"  the worker resumed {resumed} run(s) from the stored checkpoint")
    return run_audit(url, thread, header=False)


def run_sweeper(url: str, thread: str, minutes_later: float) -> int:
    clock = _clock(minutes_later)
    with open_saver(url) as saver:
        graph = build_graph(saver)
        _say(
            f"[sweeper, pid {os.getpid()}] {minutes_later:g} minutes later nobody has answered; "
            "the sweeper runs:"
        )
        resolved = ApprovalSweeper(graph, clock=clock).run_once()
        _say(f"  the sweeper resolved {resolved} approval(s) past their deadline")
    return 0


def run_audit(url: str, thread: str, *, header: bool = True) -> int:
    with open_saver(url) as saver:
        graph = build_graph(saver)
        config = {"configurable": {"thread_id": thread}}
        state = graph.get_state(config)
        values = state.values
        if header:
            _say(f"[audit, pid {os.getpid()}] a third fresh process reads the thread back:")
        else:
            _say("  reading the thread back:")
        expected = [fact for _, fact in GATHER_STEPS]
        intact = values.get("facts") == expected
        _say(
            f"  facts gathered before the pause: {len(values.get('facts', []))}/{len(expected)}"
            f" intact={intact}"
        )
        d = values.get("decision") or {}
        _say(
            f"  decision: approved={d.get('approved')} by={d.get('by')} at={d.get('at')}"
            f" timed_out={d.get('timed_out')}"
        )
        _say(f"  outcome: {values.get('outcome')}")
        history = list(graph.get_state_history(config))
        _say(
            f"  checkpoints stored for the thread: {len(history)}; still waiting: "
            f"{bool(state.next)}"
        )
        ok = intact and bool(d) and values.get("outcome") is not None and not state.next
        _say("  nothing was lost." if ok else "  SOMETHING WAS LOST")
        return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """Run one role of the demo story in this process (errors: one line, exit code 1)."""
    from langgraph_durable.interrupts._cli_common import URL_ENV, CliError, address_of

    parser = argparse.ArgumentParser(prog="python -m langgraph_durable.interrupts._demo")
    parser.add_argument("role", choices=["agent", "operator", "worker", "sweeper", "audit"])
    parser.add_argument("--url", default=os.environ.get(URL_ENV))
    parser.add_argument("--thread", required=True)
    parser.add_argument("--minutes-later", type=float, default=20.0)
    args = parser.parse_args(argv)
    if not args.url:
        parser.error(f"--url or {URL_ENV} is required")
    try:
        address_of(args.url)  # its passwords are masked in what this process prints
        return _run_role(args.role, args.url, args.thread, args.minutes_later)
    except CliError as exc:
        exc.show()
        return 1


def _run_role(role: str, url: str, thread: str, minutes_later: float) -> int:
    if role == "agent":
        return run_agent(url, thread)
    if role == "operator":
        return run_operator(url, thread, minutes_later)
    if role == "worker":
        return run_worker(url, thread, minutes_later)
    if role == "sweeper":
        return run_sweeper(url, thread, minutes_later)
    return run_audit(url, thread)


if __name__ == "__main__":
    sys.exit(main())
