"""``langgraph-durable migrate`` and ``status``: the schema versions of stored threads."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from langgraph_durable.interrupts._cli_common import (
    CliError,
    command,
    load_object,
    open_saver,
    shown_with_namespace,
    url_option,
)
from langgraph_durable.interrupts._cli_options import count_option

EXIT_SOME_FAILED = 3
"""Exit code of ``migrate`` when some checkpoints could not be upgraded."""


def _load_migrations(spec: str) -> Any:
    from langgraph_durable.migrations import MigrationsError, StateMigrations

    m = load_object(spec, what="--migrations")
    if not isinstance(m, StateMigrations):
        raise CliError(
            f"--migrations {spec!r} is a {type(m).__name__}, "
            "expected a langgraph_durable.migrations.StateMigrations"
        )
    try:
        m.validate()
    except MigrationsError as exc:
        raise CliError(f"--migrations {spec!r}: {exc}") from None
    return m


def _require_protocol(saver: Any, url: str) -> None:
    from langgraph_durable.migrations import MigrationStore

    if not isinstance(saver, MigrationStore) and not isinstance(
        getattr(saver, "migration_store", None), MigrationStore
    ):
        raise CliError(
            f"the saver for {shown_with_namespace(url)} ({type(saver).__name__}) "
            "does not support migrations"
        )


@command()
@url_option
@click.option(
    "--migrations",
    "spec",
    required=True,
    metavar="package.module:name",
    help="The StateMigrations object of the deployed code.",
)
@click.option("--dry-run", is_flag=True, help="Write nothing: count and try the steps on a sample.")
@click.option(
    "--all-history", is_flag=True, help="Upgrade every checkpoint, not only each thread's latest."
)
@count_option(
    "--batch-size", default=500, minimum=1, help="Checkpoints claimed and rewritten per batch."
)
def migrate(url: str, spec: str, dry_run: bool, all_history: bool, batch_size: int) -> None:
    """Upgrade stored checkpoints to the schema version of --migrations.

    Rewrites the latest checkpoint of every thread that is behind (with
    --all-history: every checkpoint). Safe to stop and run again, and to run
    in several processes at once. Exits with code 3 if some checkpoints failed.
    """
    from langgraph_durable.migrations import upgrade_all

    m = _load_migrations(spec)
    with open_saver(url, migrations=m) as saver:
        _require_protocol(saver, url)
        if dry_run:
            result = upgrade_all(saver, m, dry_run=True, all_history=all_history)
        else:
            result = _upgrade_showing_progress(saver, m, batch_size, all_history)
    _print_result(result, m.version, "checkpoints" if all_history else "threads")
    for f in result.failures:
        ns = f" ns={f.checkpoint_ns!r}" if f.checkpoint_ns else ""
        click.echo(
            f"failed: thread={f.thread_id!r}{ns} checkpoint={f.checkpoint_id} "
            f"v{f.schema_version}: {f.error}",
            err=True,
        )
    if result.failures:
        sys.exit(EXIT_SOME_FAILED)


def _upgrade_showing_progress(saver: Any, m: Any, batch_size: int, all_history: bool) -> Any:
    """``upgrade_all`` with a progress bar on stderr (when it is a terminal)."""
    from langgraph_durable.migrations import upgrade_all

    bar = Progress(
        TextColumn("upgrading to v{task.fields[target]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[failed]} failed"),
        console=Console(stderr=True),
        transient=False,
        disable=not sys.stderr.isatty(),
    )
    with bar:
        task = bar.add_task("upgrade", total=None, target=m.version, failed=0)

        def on_progress(p: Any) -> None:
            bar.update(task, total=max(p.total, p.done), completed=p.done, failed=p.failed)

        return upgrade_all(
            saver, m, batch_size=batch_size, all_history=all_history, progress=on_progress
        )


def _print_result(result: Any, version: int, scope: str) -> None:
    """The dry run's table per stored version, or the upgrade's one-line summary."""
    out = Console(stderr=False)
    if result.dry_run:
        table = Table(title=f"dry run: upgrade to version {version}")
        for col in ("stored version", f"{scope} to upgrade", "sampled", "sample failures"):
            table.add_column(col, justify="right")
        for v in result.dry_run_versions:
            table.add_row(
                str(v.schema_version),
                str(v.would_change),
                str(v.sampled),
                str(len(v.sample_failures)),
            )
        out.print(table)
    else:
        per = ", ".join(f"v{k}: {n}" for k, n in sorted(result.by_version.items())) or "nothing"
        out.print(
            f"upgraded {result.upgraded} {scope} to version {version} ({per}) "
            f"in {result.seconds:.1f}s; {result.skipped} held by another worker; "
            f"{result.failed} failed"
        )


STATUS_THREADS = 20
"""How many running/orphaned and how many parked threads ``status`` lists."""


@command()
@url_option
def status(url: str) -> None:
    """Per schema version: threads, checkpoints, paused threads; approval and run health."""
    with open_saver(url) as saver:
        _require_protocol(saver, url)
        # a saver that holds its migration store, or one that is its own
        rows = getattr(saver, "migration_store", saver).migration_status()
        from langgraph_durable.interrupts._cli_sweep import health_line

        approvals = health_line(saver)
        from langgraph_durable.interrupts._thread_states import (
            parked_threads,
            run_health,
            running_threads,
        )

        runs = run_health(saver)
        from langgraph_durable.checkpointers import Outbox, feature

        store = feature(saver, Outbox)
        outbox = None if store is None else store.notification_counts()
        # the threads behind the counts, with lease owner and age (the lease index alone)
        listed = running_threads(saver, limit=STATUS_THREADS) + parked_threads(
            saver, limit=STATUS_THREADS
        )
    # the address on a line of its own: a table's title wraps at the table's width
    click.echo(f"storage at {shown_with_namespace(url)}")
    table = Table(title="schema versions")
    for col in ("schema version", "threads", "checkpoints", "paused at an interrupt"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r.schema_version), str(r.threads), str(r.checkpoints), str(r.paused_threads)
        )
    if not rows:
        table.add_row("-", "0", "0", "0")
    Console().print(table)
    click.echo(approvals)
    click.echo(f"runs: {runs.running} running, {runs.orphaned} orphaned, {runs.parked} parked")
    if outbox is not None:
        click.echo(f"notifications: {outbox.pending} pending, {outbox.parked} parked")
    from langgraph_durable.interrupts._cli_operate import state_text

    for st in listed:
        click.echo(f"  {st.thread_id}: {state_text(st)}")
