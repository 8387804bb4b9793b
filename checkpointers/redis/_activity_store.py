# Generated from checkpointers/redis/_activity_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Activity results on Redis: ``saver.activities``.

Its methods run the I/O-free operations of :mod:`._activities` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods, for
sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers.redis import _activities as activities
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner import RedisRunner


class RedisActivities:
    """Activity results, insert-once per ``(thread_id, key)``: ``ActivityStore``."""

    def __init__(self, runner: RedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    def get_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """The recorded result of activity ``key`` on ``thread_id``, or ``None``."""
        op = activities.get_activity(self._core, thread_id, key)
        return self._runner.run("get_activity", op)

    def put_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Record ``value`` unless a result exists; return the stored record."""
        op = activities.put_activity(self._core, thread_id, key, value)
        return self._runner.run("put_activity", op)
