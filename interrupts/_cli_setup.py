"""``langgraph-durable setup``: create or upgrade the storage layout."""

from __future__ import annotations

import click

from langgraph_durable.interrupts._cli_common import command, open_saver, redact_url, url_option


@command()
@url_option
def setup(url: str) -> None:
    """Create or upgrade the storage layout at URL (safe to run again)."""
    with open_saver(url) as saver:
        saver.setup()
    click.echo(f"storage at {redact_url(url)} is set up")
