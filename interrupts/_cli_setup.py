"""``langgraph-durable setup``: create or upgrade the storage layout."""

from __future__ import annotations

import click

from langgraph_durable.interrupts._cli_common import (
    command,
    open_saver,
    shown_with_namespace,
    url_option,
)


@command()
@url_option
def setup(url: str) -> None:
    """Create or upgrade the storage layout at URL (safe to run again)."""
    with open_saver(url, check_setup=False) as saver:
        saver.setup()
    click.echo(f"storage at {shown_with_namespace(url)} is set up")
