"""Options that several ``langgraph-durable`` subcommands declare alike, each declared once.

:func:`graph_option`, :func:`pass_options`, :func:`seconds_option` and
:func:`count_option` take the help text of the command that uses them: the
option is the same, what it is for depends on the command. :func:`option_group`
hands a group of options to the command as one argument.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

Decorator = Callable[[Any], Any]
F = TypeVar("F", bound=Callable[..., Any])


def graph_option(help: str, *, required: bool = False) -> Decorator:
    """``--graph package.module:graph`` (the command's parameter ``spec``)."""
    return click.option(
        "--graph", "spec", required=required, metavar="package.module:graph", help=help
    )


def seconds_option(
    *decls: str, default: float, minimum: float, help: str, min_open: bool = False
) -> Decorator:
    """A number of seconds of at least ``minimum`` (more than it with ``min_open``), its
    default shown in the help."""
    return click.option(
        *decls,
        default=default,
        show_default=True,
        type=click.FloatRange(min=minimum, min_open=min_open),
        help=help,
    )


def count_option(*decls: str, default: int, minimum: int, help: str) -> Decorator:
    """A whole number of at least ``minimum``, its default shown in the help."""
    return click.option(
        *decls, default=default, show_default=True, type=click.IntRange(min=minimum), help=help
    )


def pass_options(every: str, once: str) -> Decorator:
    """``--interval`` (seconds between passes: ``every``) and ``--once`` of a looping command."""

    def declare(fn: Any) -> Any:
        fn = click.option("--once", is_flag=True, help=once)(fn)
        return seconds_option("--interval", default=5.0, minimum=0.01, help=every)(fn)

    return declare


def option_group(into: str, build: Callable[..., Any], *options: Decorator) -> Callable[[F], F]:
    """``options`` that reach the command as one argument: ``into=build(**their values)``.

    ``build``'s parameters are the options' click parameter names. The command
    keeps its own signature: click's options fill the wrapper's keywords.
    """
    names = tuple(inspect.signature(build).parameters)

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def gathered(*args: Any, **kwargs: Any) -> Any:
            group = build(**{name: kwargs.pop(name) for name in names})
            return command(*args, **{into: group}, **kwargs)

        decorated: Any = gathered
        for option in reversed(options):
            decorated = option(decorated)
        return cast(F, decorated)

    return decorate
