"""The notification outbox on PostgreSQL: the ``Outbox`` protocol over layout step 11.

The events themselves are written by that step's triggers, in the statement
that stores the fact they announce; this module claims, settles and counts
them. :class:`OutboxCore` holds the I/O-free operations;
:class:`~._outbox_store_async.AsyncPostgresOutbox`
(``saver.outbox``, with its generated sync twin) runs them.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, TypeVar

from langgraph_durable.checkpointers._outbox import OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers.postgres._core import Op, Stmt
from langgraph_durable.checkpointers.postgres._sql import render
from langgraph_durable.checkpointers.postgres._store import PostgresStore

T = TypeVar("T")

ADD = """
INSERT INTO {s}.durable_outbox (event_id, kind, thread_id, approval_id, payload)
SELECT * FROM unnest(%(ids)s::text[], %(kinds)s::text[], %(threads)s::text[],
                     %(approvals)s::text[], %(payloads)s::jsonb[])
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id"""

# Due rows in the order they became due; SKIP LOCKED keeps concurrent workers
# apart, the lease keeps a crashed worker's claims from being lost.
CLAIM = """
UPDATE {s}.durable_outbox AS o
SET lease_owner = %(owner)s, lease_until = %(until)s, attempts = o.attempts + 1
FROM (
    SELECT event_id FROM {s}.durable_outbox
    WHERE delivered_at IS NULL AND parked_at IS NULL AND next_attempt_at <= %(now)s
      AND (lease_until IS NULL OR lease_until <= %(now)s)
    ORDER BY next_attempt_at, seq
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
) AS due
WHERE o.event_id = due.event_id
RETURNING o.event_id, o.kind, o.thread_id, o.approval_id, o.payload, o.created_at, o.attempts,
          o.seq"""

DELIVERED = """
UPDATE {s}.durable_outbox
SET delivered_at = now(), lease_owner = NULL, lease_until = NULL, last_error = NULL
WHERE event_id = %(event_id)s AND delivered_at IS NULL"""

# Only the lease holder records a failure: a worker whose lease ran out and
# whose event another worker has since delivered or claimed changes nothing.
FAILED = """
UPDATE {s}.durable_outbox
SET lease_owner = NULL, lease_until = NULL, last_error = %(error)s,
    next_attempt_at = coalesce(%(retry_at)s, next_attempt_at),
    parked_at = CASE WHEN %(retry_at)s::timestamptz IS NULL THEN now() END
WHERE event_id = %(event_id)s AND lease_owner = %(owner)s AND delivered_at IS NULL"""

RELEASE = """
UPDATE {s}.durable_outbox
SET lease_owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
WHERE event_id = %(event_id)s AND lease_owner = %(owner)s AND delivered_at IS NULL"""

# Oldest first, through the partial index of layout step 14.
PURGE = """
DELETE FROM {s}.durable_outbox WHERE event_id IN (
    SELECT event_id FROM {s}.durable_outbox
    WHERE delivered_at IS NOT NULL AND delivered_at < %(before)s
    ORDER BY delivered_at LIMIT %(limit)s)
RETURNING 1"""

COUNTS = """
SELECT (SELECT count(*) FROM {s}.durable_outbox
        WHERE delivered_at IS NULL AND parked_at IS NULL),
       (SELECT count(*) FROM {s}.durable_outbox
        WHERE delivered_at IS NULL AND parked_at IS NOT NULL)"""

RETRY_PARKED = """
UPDATE {s}.durable_outbox
SET parked_at = NULL, attempts = 0, next_attempt_at = %(now)s
WHERE delivered_at IS NULL AND parked_at IS NOT NULL
RETURNING 1"""


class _OutboxQueries:
    def __init__(self, schema: str) -> None:
        self.add = render(ADD, schema)
        self.claim = render(CLAIM, schema)
        self.delivered = render(DELIVERED, schema)
        self.failed = render(FAILED, schema)
        self.release = render(RELEASE, schema)
        self.counts = render(COUNTS, schema)
        self.purge = render(PURGE, schema)
        self.retry_parked = render(RETRY_PARKED, schema)


def _event(row: tuple[Any, ...]) -> OutboxEvent:
    event_id, kind, thread_id, approval_id, payload, created_at, attempts = row[:7]
    return OutboxEvent(
        event_id=event_id,
        kind=kind,
        thread_id=thread_id,
        approval_id=approval_id,
        payload=dict(payload or {}),
        created_at=created_at,
        attempts=int(attempts),
    )


class OutboxCore(PostgresStore):
    """I/O-free outbox operations, the base of the outbox stores."""

    _q: Any

    @cached_property
    def _obq(self) -> _OutboxQueries:
        return _OutboxQueries(self._q.schema)

    def _op_add_notifications(self, events: list[OutboxEvent]) -> Op[int]:
        if not events:
            return 0
        params = {
            "ids": [e.event_id for e in events],
            "kinds": [e.kind for e in events],
            "threads": [e.thread_id for e in events],
            "approvals": [e.approval_id for e in events],
            "payloads": [json.dumps(e.payload, default=str) for e in events],
        }
        rows = (yield Stmt(self._obq.add, params, fetch=True, prepare=False)) or []
        return len(rows)

    def _op_claim_notifications(
        self, now: datetime, owner: str, lease: timedelta, limit: int
    ) -> Op[list[OutboxEvent]]:
        params = {"owner": owner, "until": now + lease, "now": now, "limit": limit}
        rows = (yield Stmt(self._obq.claim, params, fetch=True)) or []
        return [_event(r) for r in sorted(rows, key=lambda r: r[7])]

    def _op_settle_notification(
        self,
        event_id: str,
        owner: str,
        delivered: bool,
        error: str | None,
        retry_at: datetime | None,
    ) -> Op[Any]:
        if delivered:
            yield Stmt(self._obq.delivered, {"event_id": event_id})
        else:
            params = {"event_id": event_id, "owner": owner, "error": error, "retry_at": retry_at}
            yield Stmt(self._obq.failed, params)

    def _op_release_notification(self, event_id: str, owner: str) -> Op[None]:
        yield Stmt(self._obq.release, {"event_id": event_id, "owner": owner})

    def _op_purge_notifications(self, before: datetime, limit: int) -> Op[int]:
        rows = (yield Stmt(self._obq.purge, {"before": before, "limit": limit}, fetch=True)) or []
        return len(rows)

    def _op_notification_counts(self) -> Op[OutboxCounts]:
        rows = (yield Stmt(self._obq.counts, {}, fetch=True)) or []
        return OutboxCounts(pending=int(rows[0][0]), parked=int(rows[0][1]))

    def _op_retry_parked_notifications(self, now: datetime) -> Op[int]:
        rows = (yield Stmt(self._obq.retry_parked, {"now": now}, fetch=True)) or []
        return len(rows)
