"""The worker's observability options: a Prometheus endpoint and JSON health lines."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import CliError
from langgraph_durable.interrupts._cli_options import option_group

_PAIR = re.compile(r"([a-z_]+)=(\S+)")


def _observe(metrics_port: int | None, metrics_host: str, log_format: str) -> dict[str, Any]:
    return {"port": metrics_port, "host": metrics_host, "format": log_format}


observe_options = option_group(
    "observe",
    _observe,
    click.option(
        "--metrics-port",
        type=click.IntRange(min=1, max=65535),
        default=None,
        metavar="PORT",
        help="Serve the metrics in Prometheus' format at http://HOST:PORT/metrics "
        "(needs the prometheus extra).",
    ),
    click.option(
        "--metrics-host",
        default="127.0.0.1",
        show_default=True,
        help="Address --metrics-port listens on (0.0.0.0 for every interface).",
    ),
    click.option(
        "--log-format",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="The health line of each pass as text, or as one JSON object with a timestamp.",
    ),
)
"""``--metrics-port``, ``--metrics-host``, ``--log-format`` (one ``observe`` argument)."""


def start_metrics(observe: dict[str, Any]) -> Any:
    """Start the Prometheus endpoint if ``--metrics-port`` was given; the server or ``None``.

    Raises:
        CliError: the packages are missing or the port cannot be bound.
    """
    if observe["port"] is None:
        return None
    from langgraph_durable.interrupts._errors import InvalidInput
    from langgraph_durable.interrupts._metrics import serve_prometheus

    try:
        server = serve_prometheus(observe["port"], observe["host"])
    except InvalidInput as exc:
        raise CliError(str(exc)) from None
    click.echo(f"metrics on http://{observe['host']}:{observe['port']}/metrics")
    return server


def health_record(line: str, at: datetime | None = None) -> dict[str, Any]:
    """The health line as data: its ``key=value`` pairs (numbers as numbers), time and text."""
    record: dict[str, Any] = {
        "ts": (at or datetime.now(timezone.utc)).isoformat(timespec="milliseconds")
    }
    for key, raw in _PAIR.findall(line):
        record[key] = int(raw) if raw.isdigit() else raw
    parked_now = re.search(r"\(\+(\d+) parked now\)", line)
    if parked_now:
        record["parked_now"] = int(parked_now.group(1))
    record["line"] = line
    return record


def emit_health(line: str, observe: dict[str, Any]) -> None:
    """Print the pass's health line in the chosen format."""
    if observe["format"] == "json":
        click.echo(json.dumps(health_record(line)))
    else:
        click.echo(line)
