"""``langgraph-durable sweep``: apply approval timeouts, once or as a worker."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import (
    address_of,
    bind_graph,
    command,
    load_object,
    open_async_saver,
    open_saver,
    url_option,
)
from langgraph_durable.interrupts._cli_errors import configure_logging
from langgraph_durable.interrupts._cli_options import (
    count_option,
    graph_option,
    pass_options,
    seconds_option,
)


@command()
@url_option
@graph_option("The graph whose approvals are swept.", required=True)
@pass_options("Seconds between sweeps.", once="Sweep once and exit.")
@seconds_option(
    "--lease", default=300.0, minimum=1, help="Seconds a claim protects a resume in progress."
)
@count_option("--page-size", default=100, minimum=1, help="Approvals claimed per query.")
@count_option(
    "--concurrency",
    default=1,
    minimum=1,
    help="Resumes in flight at once (each waits on storage round trips).",
)
@click.option(
    "--durability",
    type=click.Choice(["sync", "async", "exit"]),
    default=None,
    help="LangGraph durability of the resumes (default: the graph's own). 'exit' writes a "
    "resumed run once, when it pauses or ends: fewer round trips, but a sweeper that dies "
    "mid-run has the steps after the approval re-run by another one lease later.",
)
@click.option(
    "--async",
    "use_async",
    is_flag=True,
    help="Resume on an event loop with the async saver (graph.ainvoke; --concurrency resumes "
    "as tasks, each with its own connection on Postgres) instead of a thread per resume.",
)
def sweep(
    url: str,
    spec: str,
    interval: float,
    once: bool,
    lease: float,
    page_size: int,
    concurrency: int,
    durability: str | None,
    use_async: bool,
) -> None:
    """Apply on_timeout to approvals past their deadline and resume their threads.

    Safe to run in several processes at once: each approval is resolved once.
    """
    from langgraph_durable.interrupts._sweeper import ApprovalSweeper

    configure_logging()
    obj = load_object(spec, what="--graph")
    # Postgres: a connection per resume in flight (the saver's default is one, shared)
    pool: dict[str, Any] = {"pool_size": concurrency + 1} if concurrency > 1 else {}

    def sweeper_of(saver: Any) -> ApprovalSweeper:
        return ApprovalSweeper(
            bind_graph(obj, saver, spec),
            lease=timedelta(seconds=lease),
            page_size=page_size,
            concurrency=concurrency,
            durability=durability,
        )

    if use_async:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_asweep(url, pool, sweeper_of, interval, once))
        return
    with open_saver(url, **(pool if address_of(url).backend == "postgres" else {})) as saver:
        sweeper = sweeper_of(saver)
        if once:
            click.echo(f"resolved {sweeper.run_once()} approval(s)")
            return
        click.echo(f"sweeping every {interval}s as {sweeper.owner} (Ctrl-C to stop)")
        try:
            sweeper.run_forever(interval)
        except KeyboardInterrupt:
            sweeper.stop()


async def _asweep(
    url: str, pool: dict[str, Any], sweeper_of: Any, interval: float, once: bool
) -> None:
    async with open_async_saver(url, **pool) as saver:
        sweeper = sweeper_of(saver)
        if once:
            click.echo(f"resolved {await sweeper.arun_once()} approval(s)")
            return
        click.echo(f"sweeping every {interval}s as {sweeper.owner} (Ctrl-C to stop)")
        await sweeper.arun_forever(interval)


def health_line(saver: Any) -> str:
    """One line of approval health for ``status``: waiting, overdue, oldest overdue."""
    from langgraph_durable.interrupts._inbox_calls import approval_health

    h = approval_health(saver)
    line = f"approvals: {h.waiting} waiting, {h.overdue} overdue"
    if h.oldest_overdue_age is not None:
        late = h.oldest_overdue_age > timedelta(minutes=5)
        line += f" (oldest {int(h.oldest_overdue_age.total_seconds())}s past its deadline"
        line += ": is a sweeper running?)" if late else ")"
    return line
