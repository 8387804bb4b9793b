"""Approval decisions on Redis: ``saver.decisions``.

Its methods run the I/O-free operations of :mod:`._decision_ops` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods of its
protocol, for sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers._waits import DecisionStore
from langgraph_durable.checkpointers.redis import _decision_ops as decisions
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner


@sync_bridges(DecisionStore, "record_decisions")  # async-only
class AsyncRedisDecisions:
    """Approval decisions, compare-and-set once per key: ``AsyncDecisionStore``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def arecord_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists for ``(thread_id, key)``; return the stored one.

        ``audit``: an audit entry appended in the same script, only if this
        call stored the decision.
        """
        op = decisions.record_decision(self._core, thread_id, key, decision, audit)
        return await self._runner.run("record_decision", op)

    async def arecord_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`arecord_decision` of each item (its keyword arguments), in one round trip."""
        op = decisions.record_decisions(self._core, items)
        return await self._runner.run("record_decisions", op)

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        op = decisions.get_decisions(self._core, thread_id, keys)
        return await self._runner.run("get_decisions", op)

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision."""
        op = decisions.count_decisions(self._core, thread_id, keys)
        return await self._runner.run("count_decisions", op)
