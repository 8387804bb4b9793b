"""The sync methods of an async saver's feature stores, made from their async twins.

An async saver's stores are called from synchronous code too: a sync node of
a graph run with ``ainvoke`` runs in a worker thread, and the helpers it calls
use the sync protocols (``DecisionStore``, ``AuditLog``, ...). Each such method
only runs its ``a``-twin on the saver's event loop and waits for the result,
so it is made here once instead of written out per store and backend.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["protocol_methods", "sync_bridges"]

S = TypeVar("S", bound="type[Any]")


def protocol_methods(protocol: type) -> list[str]:
    """The public method names a protocol class declares itself (not inherited ones)."""
    return [
        name
        for name, member in vars(protocol).items()
        if callable(member) and not name.startswith("_")
    ]


def _bridge(name: str, twin: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(twin)
    def bridged(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._runner.blocking(twin(self, *args, **kwargs))

    bridged.__name__ = bridged.__qualname__ = name
    bridged.__doc__ = f"Sync :meth:`{twin.__name__}` (from another thread than the saver's loop)."
    return bridged


def sync_bridges(*members: type | str) -> Callable[[S], S]:
    """Class decorator: a sync ``m`` beside each async ``am`` of an async store.

    Args:
        *members: Sync protocols whose methods to offer (their names), or
            single method names. The class must define ``a<name>`` for each,
            and keep its runner in ``_runner``, whose ``blocking(coro)`` runs
            a coroutine on the saver's loop from another thread and returns
            its result. A method the class defines itself is left alone.
    """

    def decorate(cls: S) -> S:
        for member in members:
            names = [member] if isinstance(member, str) else protocol_methods(member)
            for name in names:
                if name not in vars(cls):
                    setattr(cls, name, _bridge(name, getattr(cls, "a" + name)))
        return cls

    return decorate
