"""``langgraph-durable demo``: an agent pauses and exits, an operator decides, a worker resumes."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import click

from langgraph_durable.interrupts._cli_common import CliError, address_of, redact_url
from langgraph_durable.interrupts.cli import main


def _role(role: str, url: str, thread: str, *extra: str) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [
        sys.executable,
        "-m",
        "langgraph_durable.interrupts._demo",
        role,
        "--url",
        url,
        "--thread",
        thread,
        *extra,
    ]
    done = subprocess.run(cmd, env=env, check=False)
    if done.returncode != 0:
        raise CliError(f"the demo's {role} process failed (exit code {done.returncode})")


@main.command()
@click.option(
    "--url",
    envvar="LANGGRAPH_DURABLE_URL",
    default=None,
    help="postgresql:// or redis:// URL; default: an embedded PostgreSQL.",
)
@click.option(
    "--timeout-demo",
    is_flag=True,
    help="Nobody answers: show the sweeper applying the default after the deadline.",
)
def demo(url: str | None, timeout_demo: bool) -> None:
    """Watch a refund agent pause for approval, survive its process exiting, and resume."""
    started = time.monotonic()
    handle = None
    if url is None:
        from langgraph_durable.interrupts._embedded import cache_folder, start_embedded_postgres

        click.echo(f"starting an embedded PostgreSQL (data in {cache_folder()}) ...")
        url, handle = start_embedded_postgres()
    else:
        address_of(url)
    thread = f"refund-{secrets.token_hex(4)}"
    click.echo(f"storage: {redact_url(url)}\n")
    try:
        _role("agent", url, thread)
        click.echo()
        if timeout_demo:
            _role("sweeper", url, thread, "--minutes-later", "45")
            click.echo()
            _role("audit", url, thread)
        else:
            _role("operator", url, thread, "--minutes-later", "20")
            click.echo()
            _role("worker", url, thread, "--minutes-later", "21")
    finally:
        if handle is not None:
            handle.cleanup()
    click.echo(f"\ndemo finished in {time.monotonic() - started:.1f} s")
