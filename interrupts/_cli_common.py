"""What every ``langgraph-durable`` subcommand shares: the URL, opening a saver,
loading a user's object, and turning mistakes into one clear line.

A subcommand lives in its own module (``interrupts/_cli_<name>.py``), decorates
itself with ``@main.command()`` from :mod:`langgraph_durable.interrupts.cli`, takes ``@url_option``
and opens storage with :func:`open_saver`. Raise :class:`CliError` for a user
mistake; :func:`langgraph_durable.interrupts.cli.main` prints it as one line and exits non-zero.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import click

from langgraph_durable.checkpointers import _url_options
from langgraph_durable.checkpointers._errors import InvalidConfigError

F = TypeVar("F", bound=Callable[..., Any])

URL_ENV = "LANGGRAPH_DURABLE_URL"
SCHEMES = ("postgresql", "postgres", "redis", "rediss", "unix")


class CliError(click.ClickException):
    """A user mistake or an unreachable server: printed as one line, exit code 1."""

    def show(self, file: Any = None) -> None:
        """Print the message as a single line on stderr."""
        click.echo(f"error: {self.format_message()}", err=True)


def url_option(fn: F) -> F:
    """The ``--url`` option every command takes (or ``LANGGRAPH_DURABLE_URL``)."""
    return click.option(
        "--url",
        envvar=URL_ENV,
        required=True,
        help=f"postgresql://, redis:// or rediss:// URL of the storage (or ${URL_ENV}); "
        "?schema=NAME (Postgres) or ?prefix=NAME (Redis) selects a saver's namespace.",
    )(fn)


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print or log."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    userinfo = netloc[0].split(":", 1)[0] + ":***"
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{netloc[1]}"))


def backend_of(url: str) -> str:
    """``"postgres"`` or ``"redis"`` for a storage URL, else :class:`CliError`."""
    backend = _url_options.backend_of(url)
    if backend is None:
        raise CliError(
            f"unsupported URL {redact_url(url)!r}: expected postgresql://, redis:// or rediss://"
        )
    return backend


def split_saver_options(url: str) -> tuple[str, dict[str, Any]]:
    """Take our own query parameters off ``url``.

    ``?schema=NAME`` and ``?prepared_statements=false`` (behind a pooler in
    transaction mode, such as PgBouncer) on Postgres; ``?prefix=NAME`` on Redis.

    Returns:
        The URL the driver sees, and the saver options found.

    Raises:
        CliError: ``prepared_statements`` is not a yes/no value.
    """
    try:
        return _url_options.split_saver_options(url, backend_of(url))
    except InvalidConfigError as exc:
        raise CliError(f"URL parameter {exc.field}={exc.reason}") from None


@contextmanager
def open_saver(url: str, **options: Any) -> Iterator[Any]:
    """Open the sync saver for ``url``, translating connection failures.

    ``url`` may carry ``?schema=NAME`` and ``?prepared_statements=false``
    (Postgres) or ``?prefix=NAME`` (Redis): see :func:`split_saver_options`.

    Yields:
        A ``PostgresSaver`` or ``RedisSaver``.
    """
    backend = backend_of(url)
    url, found = split_saver_options(url)
    options = {**found, **options}
    try:
        if backend == "postgres":
            from langgraph_durable.checkpointers.postgres import PostgresSaver

            cm: Any = PostgresSaver.from_conn_string(url, **options)
        else:
            from langgraph_durable.checkpointers.redis import RedisSaver

            cm = RedisSaver.from_conn_string(url, **options)
        with cm as saver:
            yield saver
    except CliError:
        raise
    except Exception as exc:  # driver errors: one line, never a traceback
        _raise_unreachable(url, exc)
        raise


@asynccontextmanager
async def open_async_saver(url: str, **options: Any) -> AsyncIterator[Any]:
    """Async twin of :func:`open_saver`.

    Yields:
        An ``AsyncPostgresSaver`` or ``AsyncRedisSaver``.
    """
    backend = backend_of(url)
    url, found = split_saver_options(url)
    options = {**found, **options}
    try:
        if backend == "postgres":
            from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

            cm: Any = AsyncPostgresSaver.from_conn_string(url, **options)
        else:
            from langgraph_durable.checkpointers.redis import AsyncRedisSaver

            options.pop("pool_size", None)  # the Redis client pools on its own
            cm = AsyncRedisSaver.from_conn_string(url, **options)
        async with cm as saver:
            yield saver
    except CliError:
        raise
    except Exception as exc:
        _raise_unreachable(url, exc)
        raise


def _raise_unreachable(url: str, exc: Exception) -> None:
    """A connection failure as one line (:class:`CliError`); other errors pass."""
    if _is_connection_error(exc):
        raise CliError(f"cannot reach {redact_url(url)}: {_first_line(exc)}") from None


def _is_connection_error(exc: BaseException) -> bool:
    from langgraph_durable.checkpointers import StorageUnavailableError

    if isinstance(exc, (StorageUnavailableError, ConnectionError, OSError)):
        return True
    name = type(exc).__name__
    module = type(exc).__module__
    return (module.startswith("psycopg") and name in ("OperationalError", "PoolTimeout")) or (
        module.startswith("redis") and name in ("ConnectionError", "TimeoutError")
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def console() -> Any:
    """A rich console; when output is not a terminal, wide enough not to cut cells."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def load_object(spec: str, *, what: str) -> Any:
    """Import ``package.module:attr`` (the current directory is importable).

    Raises:
        CliError: the spec is malformed, the module or attribute is missing.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"{what} must look like package.module:name, got {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name!r} for {what}: {_first_line(exc)}") from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"{module_name!r} has no {attr!r} ({what})") from None
    return obj


def bind_graph(obj: Any, saver: Any, spec: str) -> Any:
    """The user's graph running on ``saver``.

    ``obj`` may be a compiled graph (its checkpointer is replaced by ``saver``),
    an uncompiled ``StateGraph`` (compiled with ``saver``) or a callable that
    takes the saver and returns a compiled graph.
    """
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    if isinstance(obj, Pregel):
        bound = obj.copy(update={"checkpointer": saver})
        # the copy is another object: it keeps the graph's authorization policy
        from langgraph_durable.interrupts._authz import (
            default_authorize,
            policy_of,
            set_authorization,
        )

        policy = policy_of(obj, None)
        if policy is not default_authorize:
            set_authorization(bound, policy)
        return bound
    if isinstance(obj, StateGraph):
        return obj.compile(checkpointer=saver)
    if callable(obj):
        graph = obj(saver)
        if isinstance(graph, Pregel):
            return graph
    raise CliError(
        f"--graph {spec!r} must be a compiled graph, a StateGraph, or a function "
        "taking a saver and returning a compiled graph"
    )
