"""Notification options of ``langgraph-durable worker``, and ``langgraph-durable notifications``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import CliError, command, open_saver, url_option
from langgraph_durable.interrupts._cli_options import option_group

SECRET_ENV = "LANGGRAPH_DURABLE_WEBHOOK_SECRET"


def _notify(
    webhooks: tuple[str, ...],
    webhook_secret: str | None,
    notify_config: str | None,
    expiring_within: float | None,
    notify_lease: float,
) -> dict[str, Any]:
    return {
        "webhooks": webhooks,
        "secret": webhook_secret,
        "config": notify_config,
        "expiring_within": expiring_within,
        "lease": notify_lease,
    }


notify_options = option_group(
    "notify",
    _notify,
    click.option(
        "--webhook",
        "webhooks",
        multiple=True,
        metavar="URL",
        help="POST every approval notification here (repeat for several).",
    ),
    click.option(
        "--webhook-secret",
        envvar=SECRET_ENV,
        default=None,
        help=f"HMAC-SHA256 key that signs --webhook requests (or ${SECRET_ENV}).",
    ),
    click.option(
        "--notify-config",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="JSON file: webhooks with their secrets, retries, expiring_within, decision links.",
    ),
    click.option(
        "--expiring-within",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Announce approvals whose deadline is this near (once each).",
    ),
    click.option(
        "--notify-lease",
        type=click.FloatRange(min=0.1),
        default=60.0,
        show_default=True,
        metavar="SECONDS",
        help="How long a claimed notification is held before another worker may resend it.",
    ),
)
"""The worker's notification options (collected into one ``notify`` argument)."""


def build_dispatcher(saver: Any, notify: dict[str, Any]) -> Any:
    """The worker's :class:`NotificationDispatcher`, or ``None`` when no webhook is set."""
    from langgraph_durable.interrupts._dispatch import NotificationDispatcher
    from langgraph_durable.interrupts._errors import InvalidInput
    from langgraph_durable.interrupts._webhook import (
        NotifyConfig,
        WebhookTarget,
        load_notify_config,
    )

    try:
        config = load_notify_config(notify["config"]) if notify["config"] else NotifyConfig()
        targets = list(config.targets) + [
            WebhookTarget(url=u, secret=notify["secret"]) for u in notify["webhooks"]
        ]
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if not targets:
        return None
    within = notify["expiring_within"]
    try:
        return NotificationDispatcher(
            saver,
            targets,
            retry=config.retry,
            lease=timedelta(seconds=notify["lease"]),
            expiring_within=(
                timedelta(seconds=within) if within is not None else config.expiring_within
            ),
            links=config.links,
        )
    except (TypeError, InvalidInput) as exc:
        raise CliError(f"notifications: {exc}") from None


def _age(text: str) -> timedelta:
    from langgraph_durable.interrupts._cli_actions import parse_span

    try:
        age = parse_span(text)
    except CliError:
        age = timedelta(-1)
    if age < timedelta(0):
        raise CliError(f"--purge-delivered {text!r} is not an age: use e.g. 7d, 12h, 90m")
    return age


def outbox_line(saver: Any) -> str:
    """`` notify_pending=.. notify_parked=..`` of a saver with an outbox, else ``""``."""
    from langgraph_durable.checkpointers import Outbox, feature

    outbox = feature(saver, Outbox)
    if outbox is None:
        return ""
    counts = outbox.notification_counts()
    return f" notify_pending={counts.pending} notify_parked={counts.parked}"


@command()
@url_option
@click.option(
    "--retry-parked",
    is_flag=True,
    help="Give parked notifications a fresh budget of attempts (the next worker pass sends them).",
)
@click.option(
    "--purge-delivered",
    "purge_age",
    default=None,
    metavar="AGE",
    help="Delete notifications delivered longer ago than AGE (7d, 12h), in batches.",
)
def notifications(url: str, retry_parked: bool, purge_age: str | None) -> None:
    """Show how many notifications wait for delivery and how many are parked."""
    from langgraph_durable.checkpointers import Outbox, feature

    age = None if purge_age is None else _age(purge_age)
    with open_saver(url) as saver:
        outbox = feature(saver, Outbox)
        if outbox is None:
            raise CliError(f"{type(saver).__name__} has no notification outbox")
        if age is not None:
            before = datetime.now(timezone.utc) - age
            purged = total = outbox.purge_notifications(delivered_before=before)
            while purged:
                purged = outbox.purge_notifications(delivered_before=before)
                total += purged
            click.echo(f"purged {total} delivered notification{'s' if total != 1 else ''}")
        if retry_parked:
            n = outbox.retry_parked_notifications(now=datetime.now(timezone.utc))
            click.echo(f"retrying {n} parked notification{'s' if n != 1 else ''}")
        counts = outbox.notification_counts()
    click.echo(f"pending={counts.pending} parked={counts.parked}")
