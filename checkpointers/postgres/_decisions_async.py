"""The decision store of the asyncio Postgres saver: ``saver.decisions``.

Each approval's decision is compare-and-set once, with its audit entry in the
same statement (the operations of :class:`~._approvals.ApprovalsCore`).
The sync store (:mod:`._decisions`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers import _waits as protocols  # async-only
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.postgres._approvals import ApprovalsCore, _in_order
from langgraph_durable.checkpointers.postgres._runner_async import AsyncPostgresRunner


@sync_bridges(protocols.DecisionStore, "record_decisions")  # async-only
class AsyncPostgresDecisions(ApprovalsCore):
    """``AsyncDecisionStore`` (and the sync ``DecisionStore``) on PostgreSQL."""

    _runner: AsyncPostgresRunner

    async def arecord_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists for ``(thread_id, key)``; return the stored one.

        ``audit``: an audit entry appended in the same statement, only if this
        call stored the decision.
        """
        return await self._runner.run(
            "record_decision", self._op_record_decision(thread_id, key, decision, audit)
        )

    async def arecord_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`record_decision` of each item (its keyword arguments), in one round trip.

        One pipeline, committed as one transaction; each item is its own
        compare-and-set with its own audit entry. Returns the stored decisions
        in the order of ``items``.
        """
        if not items:
            return []
        order, ops = self._ops_record_decisions(items)
        return _in_order(order, await self._runner.run_together("record_decisions", ops))

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        return await self._runner.run("get_decisions", self._op_get_decisions(thread_id, keys))

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision."""
        return await self._runner.run("count_decisions", self._op_count_decisions(thread_id, keys))
