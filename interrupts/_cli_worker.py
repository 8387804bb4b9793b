"""``langgraph-durable worker``: the approvals sweeper and the recovery worker in one loop."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import bind_graph, load_object, open_saver, url_option
from langgraph_durable.interrupts._cli_errors import configure_logging
from langgraph_durable.interrupts.cli import main


def health_line(saver: Any, recovered: int, parked_now: int) -> str:
    """``waiting=.. overdue=.. running=.. orphaned=.. recovered=.. parked=..``."""
    from langgraph_durable.interrupts._inbox import approval_health
    from langgraph_durable.interrupts._thread_states import run_health

    approvals = approval_health(saver)
    runs = run_health(saver)
    return (
        f"waiting={approvals.waiting} overdue={approvals.overdue} running={runs.running} "
        f"orphaned={runs.orphaned} recovered={recovered} parked={runs.parked}"
        + (f" (+{parked_now} parked now)" if parked_now else "")
    )


@main.command()
@url_option
@click.option(
    "--graph",
    "spec",
    required=True,
    metavar="package.module:graph",
    help="The graph whose threads are swept and recovered.",
)
@click.option(
    "--interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="Seconds between passes (one health line per pass).",
)
@click.option("--once", is_flag=True, help="Run one pass and exit.")
@click.option(
    "--max-recoveries",
    default=3,
    show_default=True,
    type=click.IntRange(min=0),
    help="Recoveries in a row (each dying again) before a thread is parked.",
)
@click.option(
    "--lease",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds a run lease lasts without a heartbeat.",
)
@click.option(
    "--heartbeat",
    "beat",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.05),
    help="Seconds between heartbeats.",
)
def worker(
    url: str, spec: str, interval: float, once: bool, max_recoveries: int, lease: float, beat: float
) -> None:
    """Sweep approvals past their deadline and resume runs whose process died.

    Safe to run in several processes at once: every approval is resolved once
    and every orphaned run is recovered by exactly one worker.
    """
    from langgraph_durable.checkpointers._leases import LeaseSettings
    from langgraph_durable.interrupts._recovery import RecoveryWorker
    from langgraph_durable.interrupts._sweeper import ApprovalSweeper

    configure_logging()
    obj = load_object(spec, what="--graph")
    settings = LeaseSettings(lease=timedelta(seconds=lease), heartbeat=timedelta(seconds=beat))
    with open_saver(url, leases=settings) as saver:
        graph = bind_graph(obj, saver, spec)
        sweeper = ApprovalSweeper(graph)
        recovery = RecoveryWorker(graph, max_recoveries=max_recoveries)
        if not once:
            click.echo(f"worker {saver.run_leases.owner}: every {interval}s (Ctrl-C to stop)")
        try:
            while True:
                started = time.monotonic()
                swept = sweeper.run_once()
                report = recovery.run_once()
                for parked in report.parked:
                    click.echo(
                        f"parked {parked.thread_id} after {parked.recoveries} "
                        f"recoveries; last error: {parked.last_error}",
                        err=True,
                    )
                click.echo(
                    f"swept={swept} "
                    + health_line(saver, recovery.recovered_total, len(report.parked))
                )
                if once:
                    return
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        except KeyboardInterrupt:
            click.echo("stopped")


@main.command()
@url_option
@click.argument("thread")
def unpark(url: str, thread: str) -> None:
    """Give parked (poison) THREAD another chance.

    The next `worker` pass resumes it from its last checkpoint, with a fresh
    count of --max-recoveries; a thread whose last checkpoint shows it finished
    or waiting is only released. Fails, changing nothing, if THREAD is not parked.
    """
    from langgraph_durable.interrupts._recovery import unpark_thread

    with open_saver(url) as saver:
        outcome = unpark_thread(saver, thread)
    if outcome == "queued":
        click.echo(f"unparked {thread}: the next worker pass resumes it")
    else:
        click.echo(f"unparked {thread}: released (its last checkpoint shows it ended)")
