"""What every ``langgraph-durable`` subcommand shares: the URL, opening a saver,
loading a user's object, and turning mistakes into one clear line.

A subcommand lives in its own module (``interrupts/_cli_<name>.py``), decorates
itself with ``@command()`` from here (:mod:`langgraph_durable.interrupts.cli` adds every
declared command to its group, so no subcommand imports the command line back), takes
``@url_option`` and opens storage with :func:`open_saver`. Raise :class:`CliError` for a user
mistake; :func:`langgraph_durable.interrupts.cli.run` prints it as one line and exits non-zero.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import click

from langgraph_durable.checkpointers import CheckpointerError, InvalidConfigError
from langgraph_durable.checkpointers.addresses import (
    NAMESPACE,
    StorageAddress,
    parse_address,
    redact_url,
    with_saver_option,
)
from langgraph_durable.interrupts._cli_errors import CliError, describe, remember_secrets

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "URL_ENV",
    "CliError",
    "StorageAddress",
    "address_of",
    "bind_graph",
    "checked_url",
    "command",
    "console",
    "declared_commands",
    "load_object",
    "not_set_up",
    "open_async_saver",
    "open_saver",
    "redact_url",
    "shown_with_namespace",
    "url_option",
]

URL_ENV = "LANGGRAPH_DURABLE_URL"
URL_HELP = (
    f"Storage: postgresql://, redis://, rediss://, unix:// URL or a keyword DSN (or ${URL_ENV}); "
    "?schema=NAME (Postgres) or ?prefix=NAME (Redis) selects a saver's namespace; "
    "?prepared_statements=false on Postgres behind a pooler in transaction mode (PgBouncer)."
)


_DECLARED: list[click.Command] = []


def command(name: str | None = None) -> Callable[[Callable[..., Any]], click.Command]:
    """Declare a ``langgraph-durable`` subcommand (click's ``@command``, kept for the group)."""

    def declare(fn: Callable[..., Any]) -> click.Command:
        declared = click.command(name)(fn)
        _DECLARED.append(declared)
        return declared

    return declare


def declared_commands() -> list[click.Command]:
    """Every subcommand declared with :func:`command` by the modules imported so far."""
    return list(_DECLARED)


def address_of(url: str) -> StorageAddress:
    """Parse ``url`` (:func:`parse_address`) and remember its passwords, so no line shows them."""
    try:
        address = parse_address(url)
    except InvalidConfigError as exc:
        if exc.field == "url":
            raise CliError(f"--url: {exc.reason}") from None
        raise CliError(f"URL parameter {exc.field}={exc.reason}") from None
    remember_secrets(address.secrets)
    return address


def checked_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # parsed as soon as click reads it: a bad URL is refused before any work, and
    # its passwords are masked in every line printed after this one
    if value is not None:
        address_of(value)
    return value


def url_option(fn: F) -> F:
    """The ``--url`` option every command takes (or ``LANGGRAPH_DURABLE_URL``)."""
    return click.option(
        "--url", envvar=URL_ENV, required=True, callback=checked_url, help=URL_HELP
    )(fn)


def _saver_context(url: str, address: StorageAddress, options: dict[str, Any], *, aio: bool) -> Any:
    """The saver class's ``from_conn_string`` context manager for ``url`` (parsed: ``address``).

    The URL goes as the user gave it: ``from_conn_string`` reads its
    ``?schema=`` / ``?prefix=`` as a Python caller's URL, so both take the same URLs.
    """
    options = dict(options)
    if address.backend == "postgres":
        from langgraph_durable.checkpointers import postgres

        cls: Any = postgres.AsyncPostgresSaver if aio else postgres.PostgresSaver
    else:
        from langgraph_durable.checkpointers import redis

        cls = redis.AsyncRedisSaver if aio else redis.RedisSaver
        options.pop("pool_size", None)  # the Redis client pools on its own
    return cls.from_conn_string(url, **options)


class _Opening:
    """Whether the saver opened: a failure before may be the driver refusing the address."""

    def __init__(self) -> None:
        self.opened = False


@contextmanager
def _failures_translated(address: StorageAddress) -> Iterator[_Opening]:
    """Driver errors raised inside (opening the saver or using it) become one line."""
    opening = _Opening()
    try:
        yield opening
    except CliError:
        raise
    except Exception as exc:  # driver errors: one line, never a traceback
        _translate(address, exc, opened=opening.opened)
        raise


@contextmanager
def open_saver(url: str, *, check_setup: bool = True, **options: Any) -> Iterator[Any]:
    """Open the sync saver for ``url``, translating connection failures.

    ``url`` may carry ``?schema=NAME`` (Postgres) or ``?prefix=NAME`` (Redis).

    Args:
        url: The command's ``--url``.
        check_setup: Refuse storage that was never set up (:func:`not_set_up`);
            only ``setup`` itself opens without this check.
        **options: Saver options (``from_conn_string``'s keywords).

    Yields:
        A ``PostgresSaver`` or ``RedisSaver``.
    """
    from langgraph_durable.interrupts._cli_layout import is_set_up

    address = address_of(url)
    with (
        _failures_translated(address) as opening,
        _saver_context(url, address, options, aio=False) as saver,
    ):
        opening.opened = True
        if check_setup and not is_set_up(saver, address.backend):
            raise not_set_up(address)
        yield saver


@asynccontextmanager
async def open_async_saver(
    url: str, *, check_setup: bool = True, **options: Any
) -> AsyncIterator[Any]:
    """Async twin of :func:`open_saver`.

    Yields:
        An ``AsyncPostgresSaver`` or ``AsyncRedisSaver``.
    """
    from langgraph_durable.interrupts._cli_layout_async import is_set_up

    address = address_of(url)
    with _failures_translated(address) as opening:
        async with _saver_context(url, address, options, aio=True) as saver:
            opening.opened = True
            if check_setup and not await is_set_up(saver, address.backend):
                raise not_set_up(address)
            yield saver


def not_set_up(address: StorageAddress) -> CliError:
    """The one line for storage never set up, naming the schema or prefix (default included)."""
    param = NAMESPACE[address.backend]
    default = "public" if address.backend == "postgres" else "lgd"
    where = f"{param} {address.options.get(param, default)!r}"
    return CliError(
        f"nothing is set up at {address.shown} ({where}): run `langgraph-durable setup` "
        "with this --url first"
    )


def shown_with_namespace(url: str) -> str:
    """``url`` as it may be printed: passwords masked, with the ``schema`` or ``prefix`` it gave."""
    address = address_of(url)
    name = address.options.get(NAMESPACE[address.backend])
    if name is None:
        return address.shown
    try:
        return with_saver_option(address.shown, name)
    except InvalidConfigError:  # the masked form did not parse again: shown as it was
        return address.shown


def _translate(address: StorageAddress, exc: Exception, *, opened: bool) -> None:
    raise_connection_failure(address, exc)
    # before the saver opened, a ValueError (redis-py) or ProgrammingError (libpq) is
    # the driver refusing the address itself; ours (an invalid ?schema=) say what it is
    if (
        not opened
        and not isinstance(exc, CheckpointerError)
        and (
            isinstance(exc, ValueError)
            or type(exc).__name__ in ("ProgrammingError", "InterfaceError")
        )
    ):
        driver = "libpq" if address.backend == "postgres" else "redis-py"
        raise CliError(f"--url is not an address {driver} takes: {describe(exc)}") from None


def raise_connection_failure(address: StorageAddress, exc: Exception) -> None:
    """A failure to connect or log in as one line (:class:`CliError`); other errors pass."""
    if _is_auth_error(exc):
        reason = (
            "the server refused the user name or password"
            if address.secrets
            else "the server requires a password and the address has none"
        )
        raise CliError(f"cannot log in to {address.shown}: {reason} ({describe(exc)})") from None
    if _is_connection_error(exc):
        raise CliError(f"cannot connect to {address.shown}: {describe(exc)}") from None


def _is_auth_error(exc: BaseException) -> bool:
    # redis-py: AuthenticationError (wrong password, or NOAUTH / HELLO without one),
    # AuthenticationWrongNumberOfArgsError (a password sent to a server without one);
    # the saver reports it as unavailable, with the driver's error as the cause
    seen: BaseException | None = exc
    while seen is not None:
        kind = type(seen)
        if kind.__module__.startswith("redis") and kind.__name__.startswith("Authentication"):
            return True
        seen = seen.__cause__
    return False


def _is_connection_error(exc: BaseException) -> bool:
    from langgraph_durable.checkpointers import StorageUnavailableError

    if isinstance(exc, (StorageUnavailableError, ConnectionError, OSError)):
        return True
    name = type(exc).__name__
    module = type(exc).__module__
    return (module.startswith("psycopg") and name in ("OperationalError", "PoolTimeout")) or (
        module.startswith("redis") and name in ("ConnectionError", "TimeoutError")
    )


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
        raise CliError(f"cannot import {module_name!r} for {what}: {describe(exc)}") from None
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
