"""SQL of the thread-wide operations: delete, copy and prune threads (constants, no I/O).

Rendered per schema by :class:`~langgraph_durable.checkpointers.postgres._stmt._Queries`
with :func:`~langgraph_durable.checkpointers.postgres._sql.render`, like the
statements of :mod:`._sql`.
"""

# -- deletes and copies -----------------------------------------------------------

DELETE_THREADS = """
WITH c AS (DELETE FROM {s}.checkpoints WHERE thread_id = ANY(%(thread_ids)s::text[])),
     b AS (DELETE FROM {s}.checkpoint_blobs WHERE thread_id = ANY(%(thread_ids)s::text[])),
     w AS (DELETE FROM {s}.checkpoint_writes WHERE thread_id = ANY(%(thread_ids)s::text[])),
     d AS (DELETE FROM {s}.durable_decisions WHERE thread_id = ANY(%(thread_ids)s::text[])),
     a AS (DELETE FROM {s}.durable_activities WHERE thread_id = ANY(%(thread_ids)s::text[])),
     t AS (DELETE FROM {s}.durable_thread_activity
           WHERE thread_id = ANY(%(thread_ids)s::text[]))
DELETE FROM {s}.durable_waits WHERE thread_id = ANY(%(thread_ids)s::text[])"""

# The checkpoints of the runs go with their writes, their wait entries and the
# blobs no surviving checkpoint of their thread+namespace refers to.
DELETE_FOR_RUNS = """
WITH RECURSIVE gone AS (
    DELETE FROM {s}.checkpoints
    WHERE metadata ? 'run_id' AND metadata ->> 'run_id' = ANY(%(run_ids)s::text[])
    RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
), w AS (
    DELETE FROM {s}.checkpoint_writes AS cw USING gone
    WHERE cw.thread_id = gone.thread_id AND cw.checkpoint_ns = gone.checkpoint_ns
      AND cw.checkpoint_id = gone.checkpoint_id
      AND NOT EXISTS (SELECT 1 FROM needed_writes AS nw
                      WHERE nw.thread_id = cw.thread_id AND nw.checkpoint_ns = cw.checkpoint_ns
                        AND nw.writes_of = cw.checkpoint_id AND nw.channel = cw.channel)
), wt AS (
    DELETE FROM {s}.durable_waits AS dw USING gone
    WHERE dw.thread_id = gone.thread_id AND dw.checkpoint_ns = gone.checkpoint_ns
      AND dw.checkpoint_id = gone.checkpoint_id
), freed AS (
    SELECT DISTINCT gone.thread_id, gone.checkpoint_ns, v.key AS channel, v.value AS version
    FROM gone CROSS JOIN LATERAL jsonb_each_text(gone.versions) AS v
), kept(thread_id, checkpoint_ns, channel, version) AS (
    -- the values the surviving checkpoints of those thread+namespaces use...
    SELECT DISTINCT k.thread_id, k.checkpoint_ns, v.key, v.value
    FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM gone) AS t
    JOIN {s}.checkpoints AS k
      ON k.thread_id = t.thread_id AND k.checkpoint_ns = t.checkpoint_ns
    CROSS JOIN LATERAL jsonb_each_text(k.checkpoint -> 'channel_versions') AS v
    WHERE NOT EXISTS (SELECT 1 FROM gone
                      WHERE gone.thread_id = k.thread_id
                        AND gone.checkpoint_ns = k.checkpoint_ns
                        AND gone.checkpoint_id = k.checkpoint_id)
), needed(thread_id, checkpoint_ns, channel, version) AS (
    -- ...and every base their deltas are built on
    SELECT thread_id, checkpoint_ns, channel, version FROM kept
    UNION
    SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.base_version
    FROM needed
    JOIN {s}.checkpoint_blobs AS bl
      ON bl.thread_id = needed.thread_id AND bl.checkpoint_ns = needed.checkpoint_ns
     AND bl.channel = needed.channel AND bl.version = needed.version
    WHERE bl.base_version < bl.version
), needed_writes AS (
    -- the pending writes kept deltas refer to stay, even once their checkpoint is gone
    SELECT DISTINCT bl.thread_id, bl.checkpoint_ns, bl.writes_of, bl.channel
    FROM needed
    JOIN {s}.checkpoint_blobs AS bl
      ON bl.thread_id = needed.thread_id AND bl.checkpoint_ns = needed.checkpoint_ns
     AND bl.channel = needed.channel AND bl.version = needed.version
    WHERE bl.writes_of IS NOT NULL
)
DELETE FROM {s}.checkpoint_blobs AS bl USING freed
WHERE bl.thread_id = freed.thread_id AND bl.checkpoint_ns = freed.checkpoint_ns
  AND bl.channel = freed.channel AND bl.version = freed.version
  AND NOT EXISTS (
      SELECT 1 FROM needed
      WHERE needed.thread_id = freed.thread_id AND needed.checkpoint_ns = freed.checkpoint_ns
        AND needed.channel = freed.channel AND needed.version = freed.version)"""

COPY_THREAD = """
WITH c AS (
    INSERT INTO {s}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                 type, checkpoint, metadata, metadata_exact, schema_version)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           CASE WHEN metadata ->> 'thread_id' = %(source)s
                THEN jsonb_set(metadata, '{{thread_id}}', to_jsonb(%(target)s::text))
                ELSE metadata END,
           metadata_exact, schema_version
    FROM {s}.checkpoints WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
), b AS (
    INSERT INTO {s}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob,
                                      base_version, root_version, writes_of)
    SELECT %(target)s, checkpoint_ns, channel, version, type, blob, base_version, root_version,
           writes_of
    FROM {s}.checkpoint_blobs WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
), w AS (
    INSERT INTO {s}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id,
                                       task_path, idx, channel, type, blob)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
    FROM {s}.checkpoint_writes WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
), d AS (
    -- approval decisions and activity results belong to the thread too; the
    -- target's own rows win (first writer wins, as when they are recorded)
    INSERT INTO {s}.durable_decisions (thread_id, key, decision, decided_at)
    SELECT %(target)s, key, decision, decided_at
    FROM {s}.durable_decisions WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
), a AS (
    INSERT INTO {s}.durable_activities (thread_id, key, value_type, value, created_at)
    SELECT %(target)s, key, value_type, value, created_at
    FROM {s}.durable_activities WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
), wt AS (
    INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns, checkpoint_id,
                                   task_id, kind, deadline, approvers, escalation_level,
                                   value_type, value)
    SELECT %(target)s, interrupt_id, checkpoint_ns, checkpoint_id, task_id, kind, deadline,
           approvers, escalation_level, value_type, value
    FROM {s}.durable_waits WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
    RETURNING interrupt_id
)
-- the claims of the waits copied (a decided wait keeps its decider's claim, so
-- the sweepers finish its resume on the copy as they would on the source)
INSERT INTO {s}.durable_wait_claims (thread_id, interrupt_id, owner, taken_at, done)
SELECT %(target)s, cl.interrupt_id, cl.owner, cl.taken_at, cl.done
FROM {s}.durable_wait_claims AS cl JOIN wt ON wt.interrupt_id = cl.interrupt_id
WHERE cl.thread_id = %(source)s
ON CONFLICT DO NOTHING"""

# -- prune (keep_latest) ------------------------------------------------------------


# The head of every thread+namespace, with the delta channels its metadata
# counts (a thread that uses a DeltaChannel needs its ancestors kept).
PRUNE_HEADS = """
SELECT DISTINCT ON (thread_id, checkpoint_ns)
       thread_id, checkpoint_ns, checkpoint_id,
       coalesce(ARRAY(SELECT jsonb_object_keys(
           CASE jsonb_typeof(metadata -> 'counters_since_delta_snapshot')
               WHEN 'object' THEN metadata -> 'counters_since_delta_snapshot'
               ELSE '{{}}'::jsonb END)), '{{}}') AS delta_channels
FROM {s}.checkpoints
WHERE thread_id = ANY(%(thread_ids)s::text[])
ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC"""

# The ancestors of a head, nearest first, with which of `channels` each one
# holds a stored value for (inline, or a non-empty blob at its version).
PRUNE_CHAIN = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, checkpoint, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, checkpoint, 0
    FROM {s}.checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
      AND checkpoint_id = %(checkpoint_id)s
    UNION ALL
    SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, chain.depth + 1
    FROM chain JOIN {s}.checkpoints AS p
      ON p.thread_id = %(thread_id)s AND p.checkpoint_ns = %(checkpoint_ns)s
     AND p.checkpoint_id = chain.parent_checkpoint_id
)
SELECT chain.checkpoint_id,
       coalesce(ARRAY(
           SELECT ch FROM unnest(%(channels)s::text[]) AS ch
           WHERE EXISTS (
               SELECT 1 FROM {s}.checkpoint_blobs AS bl
               WHERE bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(checkpoint_ns)s
                 AND bl.channel = ch
                 AND bl.version = chain.checkpoint -> 'channel_versions' ->> ch
                 AND bl.type <> 'empty')
              OR (chain.checkpoint -> 'channel_values') ? ch), '{{}}') AS seeded
FROM chain ORDER BY chain.depth"""

# Deletes every checkpoint of the threads that is not kept, with its writes and
# wait entries, and the blobs no kept checkpoint refers to. Run in the
# REPEATABLE READ snapshot PRUNE_HEADS read, so what a run saves meanwhile is
# neither seen nor deleted.
PRUNE_DELETE = """
WITH RECURSIVE keep AS (
    SELECT * FROM unnest(%(keep_threads)s::text[], %(keep_ns)s::text[], %(keep_ids)s::text[])
        AS k(thread_id, checkpoint_ns, checkpoint_id)
), gone AS (
    DELETE FROM {s}.checkpoints AS c
    WHERE c.thread_id = ANY(%(thread_ids)s::text[])
      AND NOT EXISTS (SELECT 1 FROM keep
                      WHERE keep.thread_id = c.thread_id
                        AND keep.checkpoint_ns = c.checkpoint_ns
                        AND keep.checkpoint_id = c.checkpoint_id)
    RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
), w AS (
    -- writes of every checkpoint not kept (also those a delta kept alive
    -- after their checkpoint went), except what kept deltas refer to
    DELETE FROM {s}.checkpoint_writes AS cw
    WHERE cw.thread_id = ANY(%(thread_ids)s::text[])
      AND NOT EXISTS (SELECT 1 FROM keep
                      WHERE keep.thread_id = cw.thread_id
                        AND keep.checkpoint_ns = cw.checkpoint_ns
                        AND keep.checkpoint_id = cw.checkpoint_id)
      AND NOT EXISTS (SELECT 1 FROM needed_writes AS nw
                      WHERE nw.thread_id = cw.thread_id AND nw.checkpoint_ns = cw.checkpoint_ns
                        AND nw.writes_of = cw.checkpoint_id AND nw.channel = cw.channel)
), wt AS (
    DELETE FROM {s}.durable_waits AS dw USING gone
    WHERE dw.thread_id = gone.thread_id AND dw.checkpoint_ns = gone.checkpoint_ns
      AND dw.checkpoint_id = gone.checkpoint_id
), referenced AS (
    SELECT DISTINCT c.thread_id, c.checkpoint_ns, v.key AS channel, v.value AS version
    FROM keep
    JOIN {s}.checkpoints AS c
      ON c.thread_id = keep.thread_id AND c.checkpoint_ns = keep.checkpoint_ns
     AND c.checkpoint_id = keep.checkpoint_id
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
), needed(thread_id, checkpoint_ns, channel, version) AS (
    -- the kept values and every base their deltas are built on
    SELECT thread_id, checkpoint_ns, channel, version FROM referenced
    UNION
    SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.base_version
    FROM needed
    JOIN {s}.checkpoint_blobs AS bl
      ON bl.thread_id = needed.thread_id AND bl.checkpoint_ns = needed.checkpoint_ns
     AND bl.channel = needed.channel AND bl.version = needed.version
    WHERE bl.base_version < bl.version
), needed_writes AS (
    SELECT DISTINCT bl.thread_id, bl.checkpoint_ns, bl.writes_of, bl.channel
    FROM needed
    JOIN {s}.checkpoint_blobs AS bl
      ON bl.thread_id = needed.thread_id AND bl.checkpoint_ns = needed.checkpoint_ns
     AND bl.channel = needed.channel AND bl.version = needed.version
    WHERE bl.writes_of IS NOT NULL
), b AS (
    DELETE FROM {s}.checkpoint_blobs AS bl
    WHERE bl.thread_id = ANY(%(thread_ids)s::text[])
      AND NOT EXISTS (SELECT 1 FROM needed AS r
                      WHERE r.thread_id = bl.thread_id AND r.checkpoint_ns = bl.checkpoint_ns
                        AND r.channel = bl.channel AND r.version = bl.version)
)
UPDATE {s}.checkpoints AS c SET parent_checkpoint_id = NULL
FROM keep
WHERE c.thread_id = keep.thread_id AND c.checkpoint_ns = keep.checkpoint_ns
  AND c.checkpoint_id = keep.checkpoint_id AND c.parent_checkpoint_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM keep AS p
                  WHERE p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
                    AND p.checkpoint_id = c.parent_checkpoint_id)"""
