"""The store of a saver that holds one feature, for tests that run on every saver.

Our savers hold their features as stores (``saver.decisions``, ``saver.leases``,
...); a saver that implements a feature's protocol on itself is its own store.
"""

from __future__ import annotations

from typing import Any


def part_of(saver: Any, attribute: str) -> Any:
    """``saver.<attribute>`` (``"waits"``, ``"decisions"``, ...), or the saver if it has none."""
    return getattr(saver, attribute, saver)


STORES = ("waits", "decisions", "audit", "leases", "activities", "outbox", "migration_store")
"""The attributes our savers hold their feature stores in."""


def method_of(saver: Any, name: str) -> Any:
    """The bound method ``name`` of the saver, or of the first of its stores that has it."""
    if hasattr(saver, name):
        return getattr(saver, name)
    for attribute in STORES:
        part = getattr(saver, attribute, None)
        if part is not None and hasattr(part, name):
            return getattr(part, name)
    raise AttributeError(f"{type(saver).__name__} has no {name} (nor any of its stores)")
