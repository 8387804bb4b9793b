"""``langgraph-durable demo``: an agent pauses and exits, an operator decides, a worker resumes."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import click

from langgraph_durable.interrupts._cli_common import (
    URL_ENV,
    CliError,
    address_of,
    checked_url,
    command,
)


def _role(role: str, url: str, thread: str, *extra: str) -> None:
    # the address travels in the environment, not on a command line others can list
    env = {**os.environ, "PYTHONUNBUFFERED": "1", URL_ENV: url}
    cmd = [sys.executable, "-m", "langgraph_durable.interrupts._demo", role, "--thread", thread]
    done = subprocess.run([*cmd, *extra], env=env, check=False)
    if done.returncode != 0:
        raise CliError(f"the demo's {role} process failed (exit code {done.returncode})")


@command()
@click.option(
    "--url",
    envvar=URL_ENV,
    default=None,
    callback=checked_url,
    help="postgresql://, redis:// (or any form the other commands take); default: an "
    "embedded PostgreSQL. The demo works in a schema (Postgres) or key prefix (Redis) of "
    "its own, fresh for each run and removed afterwards: nothing else there is touched.",
)
@click.option(
    "--timeout-demo",
    is_flag=True,
    help="Nobody answers: show the sweeper applying the default after the deadline.",
)
def demo(url: str | None, timeout_demo: bool) -> None:
    """Watch a refund agent pause for approval, survive its process exiting, and resume."""
    from langgraph_durable.interrupts._demo_area import create_area, remove_area

    started = time.monotonic()
    handle = None
    try:
        if url is None:
            from langgraph_durable.interrupts._embedded import (
                cache_folder,
                pgserver_module,
                start_embedded_postgres,
            )
            from langgraph_durable.interrupts._errors import MissingExtra

            try:
                pgserver_module()  # before saying it starts
            except MissingExtra as exc:
                raise CliError(
                    f"the embedded database needs the `{exc.extra}` extra: "
                    f'pip install "langgraph-durable[{exc.extra}]" (or pass --url)'
                ) from None
            click.echo(f"starting an embedded PostgreSQL (data in {cache_folder()}) ...")
            url, handle = start_embedded_postgres()
        area = create_area(url)
        click.echo(
            f"storage: {address_of(url).shown}, in a {area.kind} of the demo's own: "
            f"{area.name} (removed at the end)\n"
        )
        try:
            _story(area.url, timeout_demo)
        finally:
            remove_area(area)
            click.echo(f"\nremoved the demo's {area.kind} {area.name}")
    finally:
        if handle is not None:
            handle.cleanup()
    click.echo(f"demo finished in {time.monotonic() - started:.1f} s")


def _story(url: str, timeout_demo: bool) -> None:
    thread = f"refund-{secrets.token_hex(4)}"
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
