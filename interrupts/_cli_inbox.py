"""``inbox``: what waits for a human, across threads, from the saver's wait index."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import click
from rich.table import Table

from langgraph_durable.interrupts._cli_common import command, console, open_saver, url_option

SUMMARY_WIDTH = 70


def summary(item: Any) -> str:
    """One line of what an inbox item asks: the action and its arguments, or a batch's size."""
    if item.kind == "batch":
        open_items = sum(1 for i in item.items if not i.decided)
        first = json.dumps(item.request[0], default=str) if item.request else ""
        text = f"batch of {len(item.items)} ({open_items} open): {first}"
    else:
        request = item.request
        name = request.get("action") if isinstance(request, dict) else None
        args = {k: v for k, v in request.items() if k != "action"} if name else request
        body = json.dumps(args, default=str, separators=(", ", ": "))
        text = f"{name} {body}" if name else body
    return text if len(text) <= SUMMARY_WIDTH else text[: SUMMARY_WIDTH - 1] + "…"


def span(delta: timedelta | None) -> str:
    """A duration the way a person reads it: ``2h 05m``, ``3d 4h``, ``-12m`` (overdue)."""
    if delta is None:
        return ""
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes:02d}m"
    return f"{sign}{minutes}m {secs:02d}s" if minutes else f"{sign}{secs}s"


def row(item: Any, now: datetime) -> dict[str, Any]:
    """One inbox row as JSON-able fields."""
    left = None if item.deadline is None else item.deadline - now
    age = None if item.requested_at is None else now - item.requested_at
    return {
        "thread_id": item.thread_id,
        "approval_id": item.approval_id,
        "kind": item.kind,
        "summary": summary(item),
        "approvers": list(item.approvers),
        "deadline": None if item.deadline is None else item.deadline.isoformat(),
        "time_left_s": None if left is None else int(left.total_seconds()),
        "overdue": left is not None and left.total_seconds() <= 0,
        "escalation_level": item.escalation_level,
        "age_s": None if age is None else int(age.total_seconds()),
        "request": item.request,
    }


@command("inbox")
@url_option
@click.option("--approver", default=None, help="Only approvals routed to this label or user id.")
@click.option("--overdue", is_flag=True, help="Only approvals past their deadline.")
@click.option("--limit", default=200, show_default=True, help="At most this many rows.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, not a table.")
def inbox_cmd(url: str, approver: str | None, overdue: bool, limit: int, as_json: bool) -> None:
    """Pending approvals across threads, oldest deadline first.

    Each row: the thread, a one-line summary of what is asked, who may decide,
    the deadline and the time left (negative: overdue), the escalation level and
    how long it has waited. Answered from the saver's wait index: the cost follows
    the number of waiting approvals, not of finished threads.
    """
    from langgraph_durable.interrupts._clock import utc_now
    from langgraph_durable.interrupts._inbox_calls import pending_approvals

    now = utc_now()
    with open_saver(url) as saver:
        items = pending_approvals(saver, approver=approver, limit=None if overdue else limit)
    pairs = [(i, row(i, now)) for i in items]
    if overdue:
        pairs = [p for p in pairs if p[1]["overdue"]][:limit]
    if as_json:
        for _, r in pairs:
            click.echo(json.dumps(r, default=str))
        return
    table = Table(title="approval inbox")
    for col in ("thread", "asks", "who may decide", "deadline (UTC)", "left", "level", "age"):
        table.add_column(col)
    for item, r in pairs:
        table.add_row(
            r["thread_id"],
            r["summary"],
            ", ".join(r["approvers"]) or "anyone",
            f"{item.deadline:%Y-%m-%d %H:%M}" if item.deadline else "none",
            span(None if item.deadline is None else item.deadline - now),
            str(r["escalation_level"]),
            span(None if r["age_s"] is None else timedelta(seconds=r["age_s"])),
        )
    console().print(table)
    click.echo(f"{len(pairs)} waiting" + (" and overdue" if overdue else ""))
