"""``langgraph-durable worker``: the approvals sweeper and the recovery worker in one loop."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import (
    CliError,
    bind_graph,
    command,
    load_object,
    open_saver,
    url_option,
)
from langgraph_durable.interrupts._cli_errors import configure_logging
from langgraph_durable.interrupts._cli_notify import build_dispatcher, notify_options, outbox_line
from langgraph_durable.interrupts._cli_observe import emit_health, observe_options, start_metrics
from langgraph_durable.interrupts._cli_options import (
    count_option,
    graph_option,
    pass_options,
    seconds_option,
)
from langgraph_durable.interrupts._cli_retention import require_postgres, retention_policy
from langgraph_durable.interrupts._cli_serve import (
    Server,
    Serving,
    authenticator,
    build_app,
    guard_options,
    serve_options,
)


def health_line(saver: Any, recovered: int, parked_now: int) -> str:
    """``waiting=.. overdue=.. running=.. orphaned=.. recovered=.. parked=..``."""
    from langgraph_durable.interrupts._metrics import measure, publish

    health = measure(saver)
    publish(health)  # the gauges (when an SDK records metrics)
    return (
        f"waiting={health.waiting} overdue={health.overdue} running={health.running} "
        f"orphaned={health.orphaned} recovered={recovered} parked={health.parked}"
        + (f" (+{parked_now} parked now)" if parked_now else "")
    )


@command()
@url_option
@graph_option("The graph whose threads are swept and recovered.", required=True)
@pass_options("Seconds between passes (one health line per pass).", once="Run one pass and exit.")
@count_option(
    "--max-recoveries",
    default=3,
    minimum=0,
    help="Recoveries in a row (each dying again) before a thread is parked.",
)
@seconds_option(
    "--lease", default=30.0, minimum=0.1, help="Seconds a run lease lasts without a heartbeat."
)
@seconds_option(
    "--heartbeat", "beat", default=10.0, minimum=0.05, help="Seconds between heartbeats."
)
@click.option(
    "--retention",
    "retention_age",
    default=None,
    metavar="AGE",
    help="Also delete threads idle longer than AGE (30d, 12h), a few batches per pass "
    "(PostgreSQL; waiting and running threads are kept).",
)
@click.option(
    "--retention-keep-latest",
    is_flag=True,
    help="With --retention: keep each idle thread's latest checkpoint instead of deleting it.",
)
@notify_options
@click.option(
    "--serve",
    "serve_too",
    is_flag=True,
    help="Also serve the approval console and API (see serve), in this process.",
)
@serve_options
@guard_options
@observe_options
def worker(
    url: str,
    spec: str,
    interval: float,
    once: bool,
    max_recoveries: int,
    lease: float,
    beat: float,
    retention_age: str | None,
    retention_keep_latest: bool,
    notify: dict[str, Any],
    serve_too: bool,
    serving: Serving,
    observe: dict[str, Any],
    guard: dict[str, Any],
) -> None:
    """Sweep approvals past their deadline, resume runs whose process died, notify.

    Safe to run in several processes at once: every approval is resolved once,
    every orphaned run is recovered by exactly one worker, and every
    notification is delivered at least once to each --webhook (receivers
    de-duplicate by its X-Durable-Event-Id). With --retention, each pass also
    deletes (or prunes) a few batches of idle threads, going on where the
    previous pass stopped.
    With --serve the same process serves the approval service (--host,
    --port, --tokens). With --metrics-port it serves its metrics for
    Prometheus at /metrics; --log-format json prints each health line as JSON.
    """
    from langgraph_durable.checkpointers.runs import LeaseSettings
    from langgraph_durable.interrupts._recovery import RecoveryWorker
    from langgraph_durable.interrupts._sweeper import ApprovalSweeper

    configure_logging()
    if retention_keep_latest and retention_age is None:
        raise CliError("--retention-keep-latest needs --retention AGE")
    policy = (
        None
        if retention_age is None
        else retention_policy(retention_age, retention_keep_latest, 500, option="--retention")
    )
    if policy is not None:
        require_postgres(url)
    authenticate = authenticator(serving) if serve_too else None
    obj = load_object(spec, what="--graph")
    settings = LeaseSettings(lease=timedelta(seconds=lease), heartbeat=timedelta(seconds=beat))
    pooled: dict[str, Any] = {"pool_size": serving.pool_size} if serve_too else {}
    with open_saver(url, leases=settings, **pooled) as saver:
        retention = _RetentionPasses(saver, policy)
        graph = bind_graph(obj, saver, spec)
        sweeper = ApprovalSweeper(graph)
        recovery = RecoveryWorker(graph, max_recoveries=max_recoveries)
        dispatcher = build_dispatcher(saver, notify)
        metrics_server = start_metrics(observe)
        server = None
        if serve_too:
            app = build_app(saver, graph, authenticate, guard)
            server = Server(app, serving.host, serving.port)
            server.start()
            click.echo(f"approval service on http://{serving.host}:{serving.port}/")
        try:
            passes = functools.partial(
                _run_pass, saver, sweeper, recovery, dispatcher, retention, observe
            )
            _loop(passes, saver.run_leases.owner, interval, once)
        finally:
            if server is not None:
                server.stop()
            if metrics_server is not None:
                metrics_server.shutdown()


def _loop(one_pass: Callable[[], None], owner: str, interval: float, once: bool) -> None:
    """One pass, or a pass every ``interval`` seconds until Ctrl-C."""
    if not once:
        click.echo(f"worker {owner}: every {interval}s (Ctrl-C to stop)")
    try:
        while True:
            started = time.monotonic()
            one_pass()
            if once:
                return
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
    except KeyboardInterrupt:
        click.echo("stopped")


def _run_pass(
    saver: Any,
    sweeper: Any,
    recovery: Any,
    dispatcher: Any,
    retention: _RetentionPasses,
    observe: dict[str, Any],
) -> None:
    """One pass: sweep, recover, notify, retain, then print the health line."""
    swept = sweeper.run_once()
    report = recovery.run_once()
    for parked in report.parked:
        click.echo(
            f"parked {parked.thread_id} after {parked.recoveries} "
            f"recoveries; last error: {parked.last_error}",
            err=True,
        )
    sent = "" if dispatcher is None else _dispatch_words(dispatcher.run_once())
    emit_health(
        f"swept={swept} "
        + health_line(saver, recovery.recovered_total, len(report.parked))
        + sent
        + outbox_line(saver)
        + retention.run_once(),
        observe,
    )


class _RetentionPasses:
    """The worker's share of retention: a few batches per pass, resuming at its cursor."""

    BATCHES_PER_PASS = 4

    def __init__(self, saver: Any, policy: Any) -> None:
        self.saver = saver
        self.policy = policy
        self.cursor: Any = None
        self.removed = 0

    def run_once(self) -> str:
        """Run this pass's batches; the health line's retention part (empty when off)."""
        if self.policy is None:
            return ""
        from langgraph_durable.checkpointers.postgres import apply_retention

        report = apply_retention(
            self.saver, self.policy, max_batches=self.BATCHES_PER_PASS, after=self.cursor
        )
        self.cursor = report.cursor  # None: seen every idle thread, start again next pass
        self.removed += len(report.deleted) + len(report.pruned)
        verb = "pruned" if self.policy.keep_latest else "deleted"
        return f" {verb}={self.removed}"


def _dispatch_words(done: Any) -> str:
    failed = done.retried + done.parked
    return (
        f" notified={done.delivered}"
        + (f" notify_failed={failed}" if failed else "")
        + (f" notify_held={done.held}" if done.held else "")
    )


@command()
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
