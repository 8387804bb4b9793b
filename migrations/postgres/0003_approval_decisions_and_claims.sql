-- Step 3: approvals (issues 5/6). Decisions recorded with compare-and-set, and
-- the sweepers' claims with leases over the wait index.

-- One decision per (thread, key): an approval's interrupt id, or a batch
-- item's "<batch id>/<item key>". Kept after the thread resumes (a late
-- decider is told who won); deleted with the thread.
CREATE TABLE IF NOT EXISTS durable_decisions (
    thread_id TEXT NOT NULL,
    key TEXT NOT NULL,
    decision JSONB NOT NULL,
    decided_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (thread_id, key)
);

-- Who took responsibility for resolving a wait, and when: a sweeper's claim,
-- or a decider about to resume. Taken over once `taken_at` is a lease old.
-- Rows go with their wait entry (the thread moved past it, or was deleted).
CREATE TABLE IF NOT EXISTS durable_wait_claims (
    thread_id TEXT NOT NULL,
    interrupt_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    taken_at TIMESTAMPTZ NOT NULL,
    done BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (thread_id, interrupt_id),
    FOREIGN KEY (thread_id, interrupt_id)
        REFERENCES durable_waits (thread_id, interrupt_id) ON DELETE CASCADE
);

-- Abandoned claims and decisions whose resume never happened: found by age.
CREATE INDEX IF NOT EXISTS durable_wait_claims_open_idx
    ON durable_wait_claims (taken_at) WHERE NOT done;
