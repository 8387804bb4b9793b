-- Step 4: activity results. One row per (thread, idempotency key):
-- what an activity returned, serialized by the saver's serde like a channel
-- value. Inserted once (first writer wins); deleted with the thread.
CREATE TABLE IF NOT EXISTS durable_activities (
    thread_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value_type TEXT NOT NULL,
    value BYTEA,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, key)
);
