-- Step 14: delivered notifications can be purged in batches, oldest first,
-- through an index (the outbox of step 11 otherwise keeps them for good).
CREATE INDEX IF NOT EXISTS durable_outbox_delivered_idx
    ON durable_outbox (delivered_at) WHERE delivered_at IS NOT NULL;
