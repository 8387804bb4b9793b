"""``langgraph-durable retention``: delete or prune idle threads (PostgreSQL).

The worker runs the same policy at every pass with ``--retention AGE``; see
:func:`langgraph_durable.checkpointers.postgres.apply_retention`.
"""

from __future__ import annotations

from typing import Any

import click

from langgraph_durable.interrupts._cli_common import (
    CliError,
    address_of,
    command,
    open_saver,
    url_option,
)


def retention_policy(age: str, keep_latest: bool, batch_size: int, *, option: str) -> Any:
    """The ``RetentionPolicy`` of a command line (``age`` like ``30d``, ``12h``)."""
    from langgraph_durable.checkpointers.postgres import RetentionPolicy
    from langgraph_durable.interrupts._cli_actions import parse_span

    try:
        span = parse_span(age)
    except CliError:
        raise CliError(f"{option} {age!r} is not a duration: use e.g. 30d, 12h, 90m") from None
    if span.total_seconds() <= 0:
        raise CliError(f"{option} {age!r} must be longer than zero")
    return RetentionPolicy(older_than=span, keep_latest=keep_latest, batch_size=batch_size)


def require_postgres(url: str) -> None:
    """Refuse a Redis address before opening it: its threads expire by themselves with ``ttl=``."""
    if address_of(url).backend != "postgres":
        raise CliError(
            "retention runs on PostgreSQL; a Redis saver expires idle threads with ttl= "
            "(RedisSaver(..., ttl=...))"
        )


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def describe_report(report: Any, *, keep_latest: bool) -> str:
    """One line: what was deleted or pruned and what was kept, or (dry run) what would be."""
    ids = report.pruned if keep_latest else report.deleted
    if report.dry_run:
        done, kept = ("would prune" if keep_latest else "would delete"), "would keep"
    else:
        done, kept = ("pruned" if keep_latest else "deleted"), "kept"
    return (
        f"{done} {_count(len(ids), 'thread')} ({_count(report.checkpoints, 'checkpoint')}); "
        f"{kept} {report.kept_waiting} waiting, {report.kept_held} held by a run; "
        f"{_count(report.batches, 'batch', 'batches')}"
    )


@command()
@url_option
@click.option(
    "--older-than",
    "age",
    required=True,
    metavar="AGE",
    help="Idle time after which a thread goes: 30d, 12h, 90m.",
)
@click.option(
    "--keep-latest",
    is_flag=True,
    help="Keep each idle thread's latest checkpoint instead of deleting the thread.",
)
@click.option("--dry-run", is_flag=True, help="Only say what would go; change nothing.")
@click.option(
    "--batch-size",
    default=500,
    show_default=True,
    type=click.IntRange(min=1, max=100_000),
    help="Threads per transaction.",
)
@click.option("--list", "show", is_flag=True, help="Print each thread id too.")
def retention(
    url: str, age: str, keep_latest: bool, dry_run: bool, batch_size: int, show: bool
) -> None:
    """Delete (or, with --keep-latest, prune) threads idle longer than --older-than.

    Threads waiting at an interrupt, held by a run, or parked are never
    touched, whatever their age. Works in batches of short transactions;
    graph runs go on meanwhile.
    """
    from langgraph_durable.checkpointers.postgres import apply_retention

    policy = retention_policy(age, keep_latest, batch_size, option="--older-than")
    require_postgres(url)
    with open_saver(url) as saver:
        report = apply_retention(saver, policy, dry_run=dry_run)
    if show:
        for thread_id in report.deleted or report.pruned:
            click.echo(thread_id)
    click.echo(describe_report(report, keep_latest=keep_latest))
