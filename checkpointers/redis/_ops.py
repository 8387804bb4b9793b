"""What an I/O-free Redis operation yields and returns, shared by the core and the stores.

Every operation is a generator (as psycopg's ``_connection_base`` does): it
yields a :class:`Call` (commands to run in one pipeline, one round trip) and
receives the list of replies, or a :class:`Sleep`, or (a listing) an
:class:`Emit` of an item, and returns the operation's result. The runners
(:mod:`._runner_async`, and :mod:`._runner` generated from it) only execute.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph_durable.checkpointers.redis import _scripts as S

Cmd = tuple[Any, ...]


@dataclass(frozen=True)
class Call:
    """Commands for the runner to send in one pipeline; the generator gets the replies."""

    cmds: list[Cmd]


@dataclass(frozen=True)
class Sleep:
    """Ask the runner to wait (lock polling in ``setup()``)."""

    seconds: float


@dataclass(frozen=True)
class Emit:
    """An item of a listing, for the runner to yield."""

    value: Any


T = TypeVar("T")
# an I/O-free operation: yields commands (or a pause), is sent their replies, returns a T
Op = Generator[Call | Sleep, Any, T]
ListOp = Generator[Call | Emit, Any, None]


def script(s: S.Script, keys: Sequence[str], *args: Any) -> Cmd:
    """An EVALSHA command (the runner falls back to EVAL on NOSCRIPT)."""
    return ("EVALSHA", s.sha, len(keys), *keys, *args)


__all__ = ["Call", "Cmd", "Emit", "ListOp", "Op", "Sleep", "script"]
