-- Step 2: additive columns and indexes of langgraph-durable. The official
-- saver ignores all of them, so it can still read what we write.

-- Schema version of the code that wrote each checkpoint.
ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS schema_version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS checkpoints_schema_version_idx
    ON checkpoints (schema_version, thread_id, checkpoint_ns, checkpoint_id);

-- Exact metadata (serializer-encoded) for the rare checkpoint whose metadata
-- jsonb cannot hold (a \u0000 in a string, a non-finite float, a non-JSON
-- value); the jsonb column then holds a lossy copy used only for filtering.
ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS metadata_exact BYTEA;

-- list(filter={...}) is metadata @> filter: answered by this index.
CREATE INDEX IF NOT EXISTS checkpoints_metadata_gin_idx
    ON checkpoints USING GIN (metadata jsonb_path_ops);

-- delete_for_runs looks checkpoints up by run id.
CREATE INDEX IF NOT EXISTS checkpoints_run_id_idx
    ON checkpoints ((metadata ->> 'run_id'))
    WHERE metadata ? 'run_id';

-- The wait index (checkpointers._waits): one row per pending interrupt whose
-- value carries the deadline marker, written with the interrupt itself.
CREATE TABLE IF NOT EXISTS durable_waits (
    thread_id TEXT NOT NULL,
    interrupt_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    deadline TIMESTAMPTZ,
    approvers TEXT[] NOT NULL DEFAULT '{}',
    escalation_level INTEGER NOT NULL DEFAULT 0,
    value_type TEXT NOT NULL,
    value BYTEA,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, interrupt_id)
);
CREATE INDEX IF NOT EXISTS durable_waits_checkpoint_idx
    ON durable_waits (thread_id, checkpoint_ns, checkpoint_id, task_id);
CREATE INDEX IF NOT EXISTS durable_waits_deadline_idx
    ON durable_waits (deadline NULLS LAST, created_at);
