"""``langgraph-durable sweep``: apply approval timeouts, once or as a worker."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import click

from interrupts._cli_common import CliError, load_object, open_saver, url_option
from interrupts.cli import main


def bind_graph(obj: Any, saver: Any, spec: str) -> Any:
    """The user's graph running on ``saver``.

    ``obj`` may be a compiled graph (its checkpointer is replaced by ``saver``),
    an uncompiled ``StateGraph`` (compiled with ``saver``) or a callable that
    takes the saver and returns a compiled graph.
    """
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    if isinstance(obj, Pregel):
        return obj.copy(update={"checkpointer": saver})
    if isinstance(obj, StateGraph):
        return obj.compile(checkpointer=saver)
    if callable(obj):
        graph = obj(saver)
        if isinstance(graph, Pregel):
            return graph
    raise CliError(
        f"--graph {spec!r} must be a compiled graph, a StateGraph, or a function "
        "taking a saver and returning a compiled graph"
    )


@main.command()
@url_option
@click.option("--graph", "spec", required=True, metavar="package.module:graph",
              help="The graph whose approvals are swept.")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0.01),
              help="Seconds between sweeps.")
@click.option("--once", is_flag=True, help="Sweep once and exit.")
@click.option("--lease", default=300.0, show_default=True, type=click.FloatRange(min=1),
              help="Seconds a claim protects a resume in progress.")
@click.option("--page-size", default=100, show_default=True, type=click.IntRange(min=1),
              help="Approvals claimed per query.")
def sweep(url: str, spec: str, interval: float, once: bool, lease: float, page_size: int) -> None:
    """Apply on_timeout to approvals past their deadline and resume their threads.

    Safe to run in several processes at once: each approval is resolved once.
    """
    from interrupts._sweeper import ApprovalSweeper

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    obj = load_object(spec, what="--graph")
    with open_saver(url) as saver:
        graph = bind_graph(obj, saver, spec)
        sweeper = ApprovalSweeper(graph, lease=timedelta(seconds=lease), page_size=page_size)
        if once:
            click.echo(f"resolved {sweeper.run_once()} approval(s)")
            return
        click.echo(f"sweeping every {interval}s as {sweeper.owner} (Ctrl-C to stop)")
        try:
            sweeper.run_forever(interval)
        except KeyboardInterrupt:
            sweeper.stop()
