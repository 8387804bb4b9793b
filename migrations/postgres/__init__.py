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


__all__ = ["LayoutStep", "latest_version", "layout_steps"]
