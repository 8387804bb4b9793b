# Generated from checkpointers/postgres/_activity_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Activity results on the asyncio Postgres saver: ``saver.activities``.

The sync store (:mod:`._activity_store`) is generated from this module
by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers.postgres._activities import ActivitiesCore
from langgraph_durable.checkpointers.postgres._runner import PostgresRunner


class PostgresActivities(ActivitiesCore):
    """The ``ActivityStore`` protocol on PostgreSQL (layout step 5)."""

    _runner: PostgresRunner

    def get_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """The recorded result of activity ``key`` on ``thread_id``, or ``None``."""
        return self._runner.run("get_activity", self._op_get_activity(thread_id, key))

    def put_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Record ``value`` unless a result exists; return the stored record."""
        return self._runner.run("put_activity", self._op_put_activity(thread_id, key, value))
