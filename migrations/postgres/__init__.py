"""The PostgreSQL storage-layout steps, as numbered append-only ``.sql`` files.

``NNNN_name.sql`` is step ``NNNN``. A step on main is never edited: a change is
a new step. The files ship inside the wheel and are read with
:mod:`importlib.resources`, so an installed copy and a source checkout load the
same text. The saver's ``setup()`` applies the pending ones (see
``langgraph_durable.checkpointers.postgres``); this package only lists them, without I/O to any
database and without importing a driver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_STEP_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class LayoutStep:
    """One storage-layout step.

    Attributes:
        version: The layout version the step brings the schema to.
        name: The file name without its number and suffix.
        sql: The statements of the step (run in one transaction).
    """

    version: int
    name: str
    sql: str

    @property
    def statements(self) -> tuple[str, ...]:
        """:attr:`sql` as single statements, in order (see :func:`split_statements`)."""
        return split_statements(self.sql)


# A statement ends at a ``;`` outside these: quoted text ('' doubles a quote;
# E'' strings also escape with a backslash), quoted names, comments, and
# dollar-quoted bodies (a function's ``$$ ... $$`` holds semicolons of its own).
_TOKEN = re.compile(
    r"""
      (?P<estring>(?<![\w$])[eE]'(?:[^'\\]|\\.|'')*')
    | (?P<string>'(?:[^']|'')*')
    | (?P<ident>"(?:[^"]|"")*")
    | (?P<line>--[^\n]*)
    | (?P<dollar>\$(?P<tag>[A-Za-z_][A-Za-z0-9_]*)?\$)
    | (?P<block>/\*)
    | (?P<end>;)
    | (?P<unclosed>['"])
    """,
    re.VERBOSE | re.DOTALL,
)


def split_statements(script: str) -> tuple[str, ...]:
    """The single statements of an SQL script, without the ``;`` that ends each.

    A connection in pipeline mode runs one statement per query (the extended
    protocol refuses a script), so ``setup()`` sends a step statement by
    statement. Comments stay with the statement they precede; a statement of
    only comments and blanks is left out.

    Raises:
        ValueError: a quote, comment or dollar-quoted body is not closed.
    """
    statements: list[str] = []
    start = pos = 0
    while (match := _TOKEN.search(script, pos)) is not None:
        kind = match.lastgroup if match.lastgroup != "tag" else "dollar"
        pos = match.end()
        if kind == "dollar":
            close = script.find(match.group(0), pos)
            if close < 0:
                raise ValueError(
                    f"unclosed dollar quote {match.group(0)} at offset {match.start()}"
                )
            pos = close + len(match.group(0))
        elif kind == "block":
            pos = _block_comment_end(script, match.start())
        elif kind == "unclosed":
            raise ValueError(f"unclosed quote {match.group(0)} at offset {match.start()}")
        elif kind == "end":
            statements.append(script[start : match.start()])
            start = pos
    statements.append(script[start:])
    return tuple(s.strip() for s in statements if _has_code(s))


def _block_comment_end(script: str, at: int) -> int:
    """The offset after the ``/* ... */`` comment that opens at ``at`` (they nest)."""
    depth, pos = 0, at
    while True:
        opening, closing = script.find("/*", pos), script.find("*/", pos)
        if closing < 0:
            raise ValueError(f"unclosed comment at offset {at}")
        if 0 <= opening < closing:
            depth, pos = depth + 1, opening + 2
        else:
            depth, pos = depth - 1, closing + 2
            if depth == 0:
                return pos


def _has_code(statement: str) -> bool:
    without_lines = re.sub(r"--[^\n]*", "", statement)
    return bool(re.sub(r"/\*.*?\*/", "", without_lines, flags=re.DOTALL).strip())


@cache
def layout_steps() -> tuple[LayoutStep, ...]:
    """All steps, in version order.

    Raises:
        RuntimeError: the numbering has a gap or a duplicate (a packaging bug).
    """
    steps = []
    for entry in resources.files(__name__).iterdir():
        match = _STEP_NAME.match(entry.name)
        if match:
            steps.append(LayoutStep(int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    steps.sort(key=lambda s: s.version)
    if [s.version for s in steps] != list(range(1, len(steps) + 1)):
        raise RuntimeError(f"postgres layout steps are not numbered 1..n: {steps!r}")
    return tuple(steps)


def latest_version() -> int:
    """The layout version this code brings a schema to."""
    return len(layout_steps())


from langgraph_durable.migrations.postgres._partitions import (  # noqa: E402
    MAX_PARTITIONS,
    PARTITIONED_TABLES,
    partition_name,
    partitioned,
)

__all__ = [
    "MAX_PARTITIONS",
    "PARTITIONED_TABLES",
    "LayoutStep",
    "latest_version",
    "layout_steps",
    "partition_name",
    "partitioned",
    "split_statements",
]
