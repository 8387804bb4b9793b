"""Find the part of a saver that implements one of the protocols of this package.

A langgraph-durable saver holds its features as stores (``saver.waits``,
``saver.decisions``, ``saver.audit``, ``saver.leases``, ``saver.activities``,
``saver.outbox``, ``saver.checkpoint_puts``); a third-party saver may implement
a protocol on itself. Code that uses a feature asks :func:`feature` for it and never assumes where
it lives.
"""

from __future__ import annotations

from typing import Any, TypeVar

P = TypeVar("P")

#: where a langgraph-durable saver keeps its stores, in the order they are asked
STORE_ATTRIBUTES = (
    "waits",
    "decisions",
    "audit",
    "leases",
    "activities",
    "outbox",
    "checkpoint_puts",
)


def feature(saver: Any, protocol: type[P]) -> P | None:
    """The part of ``saver`` that implements ``protocol``, or None if no part does.

    That is ``saver`` itself if it implements the protocol, else the first of its
    stores (:data:`STORE_ATTRIBUTES`) that does.

    Args:
        saver: Any checkpoint saver (or None: then None).
        protocol: A ``runtime_checkable`` protocol of this package, such as
            :class:`DecisionStore` or :class:`AsyncWaitIndex`.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph_durable.checkpointers import DecisionStore, feature
        >>> feature(InMemorySaver(), DecisionStore) is None
        True
    """
    if saver is None:
        return None
    if isinstance(saver, protocol):
        return saver
    for name in STORE_ATTRIBUTES:
        part = getattr(saver, name, None)
        if part is not None and isinstance(part, protocol):
            return part
    return None
