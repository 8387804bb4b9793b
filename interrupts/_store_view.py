"""The async view of a sync-only store part: its ``aname`` calls run ``name`` in a thread.

Our sync savers also answer LangGraph's async checkpoint calls, so async flows
run on them, while their stores implement only the sync protocols. An async
backend reaches such a store through this view, never through the in-process
fallback: a decision or claim kept there is lost with the process and does not
exclude other processes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

P = TypeVar("P")


class InThread:
    """``await view.aname(...)`` runs ``part.name(...)`` in a worker thread."""

    def __init__(self, part: Any) -> None:
        self._part = part

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if not name.startswith("a"):
            raise AttributeError(name)
        # a method the part lacks raises AttributeError here, as on the part
        method = getattr(self._part, name[1:])

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call


def in_thread(native: P | None, part: Any) -> P | None:
    """``native`` (the async protocol's part), else the view of the sync ``part``, else None."""
    if native is not None or part is None:
        return native
    return cast(P, InThread(part))
