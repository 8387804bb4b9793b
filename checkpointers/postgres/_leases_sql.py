"""SQL of the run leases (table ``durable_run_leases``, layout step 0004)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers._leases import LeaseRecord

COLS = (
    "thread_id, state, owner, token, acquired_at, renewed_at, expires_at, progress_at,"
    " progress, attempts, recoveries, last_error, reason, ended_at"
)

ACQUIRE = """
INSERT INTO {s}.durable_run_leases AS l
    (thread_id, state, owner, token, acquired_at, renewed_at, expires_at, progress_at)
VALUES (%(thread_id)s, 'running', %(owner)s, 1, %(now)s, %(now)s, %(expires)s, %(now)s)
ON CONFLICT (thread_id) DO UPDATE SET
    state = 'running',
    owner = EXCLUDED.owner,
    token = CASE WHEN l.state = 'running' AND l.owner = EXCLUDED.owner
                 THEN l.token ELSE l.token + 1 END,
    acquired_at = CASE WHEN l.state = 'running' AND l.owner = EXCLUDED.owner
                       THEN l.acquired_at ELSE EXCLUDED.acquired_at END,
    renewed_at = EXCLUDED.renewed_at,
    expires_at = EXCLUDED.expires_at,
    progress_at = EXCLUDED.progress_at,
    reason = NULL,
    ended_at = NULL
WHERE l.state <> 'running' OR l.owner = EXCLUDED.owner OR l.expires_at <= EXCLUDED.acquired_at
RETURNING {cols}
"""

RENEW = """
UPDATE {s}.durable_run_leases AS l SET
    renewed_at = %(now)s,
    expires_at = %(expires)s,
    progress_at = COALESCE(p.progress_at, l.progress_at),
    progress = COALESCE(p.note, l.progress)
FROM unnest(%(ids)s::text[], %(progress_at)s::timestamptz[], %(notes)s::text[])
     AS p(thread_id, progress_at, note)
WHERE l.thread_id = p.thread_id AND l.state = 'running' AND l.owner = %(owner)s
RETURNING l.thread_id
"""

RELEASE = """
UPDATE {s}.durable_run_leases SET state = 'released', reason = %(reason)s,
    ended_at = %(now)s, attempts = 0, last_error = COALESCE(%(error)s, last_error)
WHERE thread_id = %(thread_id)s AND state = 'running' AND owner = %(owner)s
RETURNING thread_id
"""

RECORD_ERROR = """
UPDATE {s}.durable_run_leases SET last_error = %(error)s
WHERE thread_id = %(thread_id)s AND owner = %(owner)s
"""

FIND_EXPIRED = """
SELECT {cols} FROM {s}.durable_run_leases
WHERE state = 'running' AND expires_at <= %(now)s
ORDER BY expires_at LIMIT %(limit)s
"""

CLAIM = """
UPDATE {s}.durable_run_leases SET owner = %(owner)s, token = token + 1, attempts = attempts + 1,
    recoveries = recoveries + 1, acquired_at = %(now)s, renewed_at = %(now)s,
    expires_at = %(expires)s, progress_at = %(now)s, progress = NULL
WHERE thread_id = %(thread_id)s AND state = 'running' AND token = %(token)s
    AND expires_at <= %(now)s
RETURNING {cols}
"""

TAKE_OVER = """
UPDATE {s}.durable_run_leases SET owner = %(owner)s, token = token + 1, acquired_at = %(now)s,
    renewed_at = %(now)s, expires_at = %(expires)s, progress_at = %(now)s, progress = NULL
WHERE thread_id = %(thread_id)s AND state = 'running' AND token = %(token)s
    AND renewed_at IS NOT DISTINCT FROM %(renewed_at)s
RETURNING {cols}
"""

PARK = """
UPDATE {s}.durable_run_leases SET state = 'parked', reason = %(reason)s, ended_at = %(now)s
WHERE thread_id = %(thread_id)s AND state = 'running' AND token = %(token)s
    AND expires_at <= %(now)s
RETURNING {cols}
"""

UNPARK = """
UPDATE {s}.durable_run_leases SET attempts = 0, reason = 'unparked',
    state = CASE WHEN %(retry_at)s::timestamptz IS NULL THEN 'released' ELSE 'running' END,
    expires_at = COALESCE(%(retry_at)s::timestamptz, expires_at),
    ended_at = CASE WHEN %(retry_at)s::timestamptz IS NULL THEN ended_at END
WHERE thread_id = %(thread_id)s AND state = 'parked'
RETURNING thread_id
"""

GET = "SELECT {cols} FROM {s}.durable_run_leases WHERE thread_id = %(thread_id)s"

LIST_RUNNING = """
SELECT {cols} FROM {s}.durable_run_leases WHERE state = 'running'
ORDER BY expires_at LIMIT %(limit)s
"""

LIST_PARKED = """
SELECT {cols} FROM {s}.durable_run_leases WHERE state = 'parked' ORDER BY ended_at LIMIT %(limit)s
"""

COUNTS = """
SELECT
    (SELECT count(*) FROM {s}.durable_run_leases WHERE state = 'running' AND expires_at > %(now)s),
    (SELECT count(*) FROM {s}.durable_run_leases WHERE state = 'running' AND expires_at <= %(now)s),
    (SELECT count(*) FROM {s}.durable_run_leases WHERE state = 'parked')
"""

DELETE = "DELETE FROM {s}.durable_run_leases WHERE thread_id = %(thread_id)s"


def record(row: Sequence[Any]) -> LeaseRecord:
    return LeaseRecord(
        thread_id=row[0],
        state=row[1],
        owner=row[2],
        token=int(row[3]),
        acquired_at=row[4],
        renewed_at=row[5],
        expires_at=row[6],
        progress_at=row[7],
        progress=row[8],
        attempts=int(row[9]),
        recoveries=int(row[10]),
        last_error=row[11],
        reason=row[12],
        ended_at=row[13],
    )
