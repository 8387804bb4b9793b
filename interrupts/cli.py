"""The ``langgraph-durable`` command line (top floor: nothing imports it).

Each subcommand lives in its own ``interrupts/_cli_<name>.py`` module, declared
there with ``@command()``; this module imports them and adds each to :data:`main`.
"""

from __future__ import annotations

import sys

import click

from langgraph_durable.checkpointers import CheckpointerError
from langgraph_durable.interrupts import (  # noqa: F401 (imported to declare their commands)
    _cli_actions,
    _cli_demo,
    _cli_inbox,
    _cli_migrate,
    _cli_notify,
    _cli_operate,
    _cli_retention,
    _cli_serve,
    _cli_setup,
    _cli_sweep,
    _cli_worker,
)
from langgraph_durable.interrupts._cli_common import declared_commands
from langgraph_durable.interrupts._cli_errors import CliError, describe
from langgraph_durable.interrupts._errors import InterruptsError
from langgraph_durable.migrations import MigrationsError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="langgraph-durable")
def main() -> None:
    """Operate LangGraph threads stored by langgraph-durable savers.

    Every command takes --url (postgresql://, redis://, rediss://, unix:// or a
    libpq keyword DSN) or the LANGGRAPH_DURABLE_URL environment variable.
    """


def run() -> None:
    """Entry point: mistakes and failures become one line on stderr and exit code 1.

    No line printed here holds a password of the command's ``--url``.
    """
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (CheckpointerError, MigrationsError, InterruptsError) as exc:
        # our own errors already say what was wrong (thread, version, step): one line
        click.echo(f"error: {describe(exc)}", err=True)
        sys.exit(1)
    except Exception as exc:
        # a driver's or a bug's: still one line, and its text may quote the URL
        click.echo(f"error: {type(exc).__name__}: {describe(exc)}", err=True)
        sys.exit(1)


# the subcommand modules imported above declared their commands
for _declared in declared_commands():
    main.add_command(_declared)

__all__ = ["CliError", "main", "run"]

if __name__ == "__main__":
    # run with -m: use the registered module, not this __main__ copy
    from langgraph_durable.interrupts.cli import run as _run

    _run()
