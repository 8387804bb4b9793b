-- Step: run leases. One row per thread that a leasing saver ran:
-- who runs it, until when its lease lasts, how often it was recovered.
-- Orphaned runs are found through the partial index on running rows only, so
-- finding them costs the same however many threads are finished or waiting.

CREATE TABLE IF NOT EXISTS durable_run_leases (
    thread_id TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('running', 'released', 'parked')),
    owner TEXT,
    token BIGINT NOT NULL DEFAULT 0,
    acquired_at TIMESTAMPTZ,
    renewed_at TIMESTAMPTZ,
    expires_at TIMESTAMPTZ,
    progress_at TIMESTAMPTZ,
    progress TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    recoveries INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    reason TEXT,
    ended_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS durable_run_leases_running_idx
    ON durable_run_leases (expires_at) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS durable_run_leases_parked_idx
    ON durable_run_leases (ended_at) WHERE state = 'parked';
