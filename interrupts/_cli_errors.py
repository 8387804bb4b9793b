"""How the command line reports: one line per mistake, never a password.

Every password a command was given (in a URL, a keyword DSN or a query
parameter) is remembered here when the command parses its ``--url``; every
line the command line prints about an error, and every log line of the
long-running commands, goes through :func:`scrub` first. Redacting the URL
where it is echoed is not enough: drivers quote pieces of what they could
not parse (libpq: ``invalid percent-encoded token: "..."``).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from langgraph_durable.checkpointers.addresses import MASK

_secrets: set[str] = set()


class CliError(click.ClickException):
    """A user mistake or an unreachable server: printed as one line, exit code 1."""

    def show(self, file: Any = None) -> None:
        """Print the message as a single line on stderr, without any password."""
        click.echo(f"error: {one_line(self.format_message())}", err=True)


def remember_secrets(values: Any) -> None:
    """Add passwords that no printed line may contain (empty ones are ignored)."""
    _secrets.update(v for v in values if v)


def forget_secrets() -> None:
    """Forget every remembered password (a process that runs several commands, as tests do)."""
    _secrets.clear()


def scrub(text: str) -> str:
    """``text`` with every remembered password replaced by ``***``."""
    # longest first: a password that contains another is masked whole
    for secret in sorted(_secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def one_line(text: str) -> str:
    """The first non-empty line of ``text``, scrubbed."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return scrub(lines[0].strip() if lines else "")


def describe(exc: BaseException) -> str:
    """One scrubbed line about ``exc``: its message, or its type when it has none."""
    return one_line(str(exc)) or type(exc).__name__


class ScrubbingFormatter(logging.Formatter):
    """A log formatter that masks remembered passwords (messages and tracebacks)."""

    def format(self, record: logging.LogRecord) -> str:
        """Format ``record`` as usual, then scrub it."""
        return scrub(super().format(record))


def configure_logging() -> None:
    """INFO logging on stderr for the long-running commands, passwords masked."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for h in list(root.handlers):
        if isinstance(h.formatter, ScrubbingFormatter):
            # a command run again in the same process (tests): one handler, on today's stderr
            root.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ScrubbingFormatter("%(asctime)s %(name)s %(message)s"))
    root.addHandler(handler)
