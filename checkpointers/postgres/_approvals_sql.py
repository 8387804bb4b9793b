"""SQL of the approvals fast path (decisions and claims), see layout step 0003."""

from __future__ import annotations

# The decision and, when the key names a pending wait, the decider's claim on
# resuming it: one statement. A row that lost the race comes back empty when
# the winner committed after this statement's snapshot: the caller re-reads.
RECORD_DECISION = """
WITH ins AS (
    INSERT INTO {s}.durable_decisions (thread_id, key, decision, decided_at)
    VALUES (%(thread_id)s, %(key)s, %(decision)s, %(at)s)
    ON CONFLICT (thread_id, key) DO NOTHING
    RETURNING decision
), claim AS (
    INSERT INTO {s}.durable_wait_claims (thread_id, interrupt_id, owner, taken_at)
    SELECT w.thread_id, w.interrupt_id, %(owner)s, %(claim_at)s
    FROM {s}.durable_waits AS w
    WHERE w.thread_id = %(thread_id)s AND w.interrupt_id = %(key)s
      AND EXISTS (SELECT 1 FROM ins)
    ON CONFLICT (thread_id, interrupt_id) DO UPDATE
        SET taken_at = greatest(durable_wait_claims.taken_at, EXCLUDED.taken_at)
)
SELECT decision FROM ins
UNION ALL
SELECT decision FROM {s}.durable_decisions
WHERE thread_id = %(thread_id)s AND key = %(key)s AND NOT EXISTS (SELECT 1 FROM ins)"""

GET_DECISION = """
SELECT decision FROM {s}.durable_decisions WHERE thread_id = %(thread_id)s AND key = %(key)s"""

GET_DECISIONS = """
SELECT key, decision FROM {s}.durable_decisions
WHERE thread_id = %(thread_id)s AND key = ANY(%(keys)s::text[])"""

COUNT_DECISIONS = """
SELECT count(*) FROM {s}.durable_decisions
WHERE thread_id = %(thread_id)s AND key = ANY(%(keys)s::text[])"""

# Claimable: past the deadline, or held by a claim (or a decider) that is a
# lease old and not done. Both candidate sets come off an index (the deadline
# index; the partial index of open claims), so the cost follows the number of
# due waits, not the number waiting. SKIP LOCKED keeps concurrent sweepers on
# disjoint rows; the guarded upsert makes a claim exclusive even so.
CLAIM_DUE = """
WITH due AS (
    SELECT w.thread_id, w.interrupt_id
    FROM {s}.durable_waits AS w
    WHERE w.deadline <= %(now)s
      AND (%(kinds)s::text[] IS NULL OR w.kind = ANY(%(kinds)s::text[]))
      AND NOT EXISTS (
          SELECT 1 FROM {s}.durable_wait_claims AS c
          WHERE c.thread_id = w.thread_id AND c.interrupt_id = w.interrupt_id
            AND (c.done OR c.taken_at > %(expired)s))
    ORDER BY w.deadline
    LIMIT %(limit)s
    FOR UPDATE OF w SKIP LOCKED
), abandoned AS (
    SELECT w.thread_id, w.interrupt_id
    FROM {s}.durable_wait_claims AS c
    JOIN {s}.durable_waits AS w
      ON w.thread_id = c.thread_id AND w.interrupt_id = c.interrupt_id
    WHERE NOT c.done AND c.taken_at <= %(expired)s
      AND (%(kinds)s::text[] IS NULL OR w.kind = ANY(%(kinds)s::text[]))
    ORDER BY c.taken_at
    LIMIT %(limit)s
    FOR UPDATE OF w SKIP LOCKED
), picked AS (
    SELECT * FROM due UNION SELECT * FROM abandoned LIMIT %(limit)s
), claimed AS (
    INSERT INTO {s}.durable_wait_claims (thread_id, interrupt_id, owner, taken_at)
    SELECT thread_id, interrupt_id, %(owner)s, %(now)s FROM picked
    ON CONFLICT (thread_id, interrupt_id) DO UPDATE
        SET owner = EXCLUDED.owner, taken_at = EXCLUDED.taken_at
        WHERE NOT durable_wait_claims.done AND durable_wait_claims.taken_at <= %(expired)s
    RETURNING thread_id, interrupt_id
)
SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.interrupt_id, w.kind, w.deadline,
       w.approvers, w.escalation_level, w.value_type, w.value, w.created_at
FROM claimed JOIN {s}.durable_waits AS w
  ON w.thread_id = claimed.thread_id AND w.interrupt_id = claimed.interrupt_id
ORDER BY w.deadline NULLS LAST"""

RELEASE_CLAIM = """
DELETE FROM {s}.durable_wait_claims
WHERE thread_id = %(thread_id)s AND interrupt_id = %(interrupt_id)s AND owner = %(owner)s
  AND NOT done"""

FINISH_CLAIM = """
UPDATE {s}.durable_wait_claims SET done = true
WHERE thread_id = %(thread_id)s AND interrupt_id = %(interrupt_id)s AND owner = %(owner)s"""

WAIT_COUNTS = """
SELECT count(*),
       count(*) FILTER (WHERE w.deadline <= %(now)s AND c.thread_id IS NULL),
       min(w.deadline) FILTER (WHERE w.deadline <= %(now)s AND c.thread_id IS NULL)
FROM {s}.durable_waits AS w
LEFT JOIN {s}.durable_wait_claims AS c
  ON c.thread_id = w.thread_id AND c.interrupt_id = w.interrupt_id AND c.done
WHERE %(kinds)s::text[] IS NULL OR w.kind = ANY(%(kinds)s::text[])"""
