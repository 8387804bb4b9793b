"""Activity results on PostgreSQL: the ``ActivityStore`` protocol over layout step 5.

:class:`ActivitiesCore` holds the I/O-free operations (generators of
:class:`~langgraph_durable.checkpointers.postgres._core.Stmt`);
:class:`~._activity_store_async.AsyncPostgresActivities`
(and its generated sync twin) runs them as ``saver.activities``. Values
are encoded like channel values (the saver's serde, no pickle); rows are
deleted with their thread (``delete_thread``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, TypeVar

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.postgres._core import Op, Stmt
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._stmt import key_to_store
from langgraph_durable.checkpointers.postgres._store import PostgresStore

T = TypeVar("T")

# Insert once; a loser of the race reads the winner's row in the same statement
# (or, if the winner committed after this statement's snapshot, re-reads).
PUT_ACTIVITY = """
WITH ins AS (
    INSERT INTO {s}.durable_activities (thread_id, key, value_type, value)
    VALUES (%(thread_id)s, %(key)s, %(value_type)s, %(value)s)
    ON CONFLICT (thread_id, key) DO NOTHING
    RETURNING value_type, value, created_at
)
SELECT value_type, value, created_at FROM ins
UNION ALL
SELECT value_type, value, created_at FROM {s}.durable_activities
WHERE thread_id = %(thread_id)s AND key = %(key)s AND NOT EXISTS (SELECT 1 FROM ins)"""

GET_ACTIVITY = """
SELECT value_type, value, created_at FROM {s}.durable_activities
WHERE thread_id = %(thread_id)s AND key = %(key)s"""


class _ActivityQueries:
    def __init__(self, schema: str) -> None:
        self.put = render(PUT_ACTIVITY, schema)
        self.get = render(GET_ACTIVITY, schema)


class ActivitiesCore(PostgresStore):
    """I/O-free activity operations, the base of the activity stores."""

    _q: Any

    @cached_property
    def _actq(self) -> _ActivityQueries:
        return _ActivityQueries(self._q.schema)

    def _record(self, thread_id: str, key: str, row: tuple[Any, ...]) -> ActivityRecord:
        value_type, blob, created = row
        value = self._decode_value(
            value_type, blob, where=(thread_id, "", ""), channel=f"<activity {key}>"
        )
        return ActivityRecord(thread_id=thread_id, key=key, value=value, created_at=created)

    def _op_get_activity(self, thread_id: str, key: str) -> Op[ActivityRecord | None]:
        params = {"thread_id": check_id("thread_id", thread_id), "key": check_id("key", key)}
        rows = yield Stmt(self._actq.get, params, fetch=True)
        return self._record(thread_id, key, rows[0]) if rows else None

    def _op_put_activity(self, thread_id: str, key: str, value: Any) -> Op[ActivityRecord]:
        value_type, blob = self._encode_value(value)
        params = {
            "thread_id": key_to_store("thread_id", thread_id),
            "key": key_to_store("key", key),
            "value_type": value_type,
            "value": blob,
        }
        rows = yield Stmt(self._actq.put, params, fetch=True)
        if not rows:
            rows = yield Stmt(self._actq.get, {"thread_id": thread_id, "key": key}, fetch=True)
        if not rows:  # pragma: no cover - the row exists once the insert ran
            return ActivityRecord(thread_id=thread_id, key=key, value=value)
        return self._record(thread_id, key, rows[0])
