-- Step 6: delta storage of growing channel values.
-- A value that extends a stored version of its channel is kept as a row of
-- type 'delta' holding only the new items; base_version names the version it
-- extends (same thread, namespace and channel) and root_version the whole
-- value its chain starts from. Every version of a chain lies between the two
-- (bases are older than what extends them), so a read fetches a chain with
-- one range scan of the primary key. Whole values leave both NULL, so every
-- row written before this step, and every row the official
-- langgraph-checkpoint-postgres writes, stays as it was.
ALTER TABLE checkpoint_blobs ADD COLUMN IF NOT EXISTS base_version TEXT;
ALTER TABLE checkpoint_blobs ADD COLUMN IF NOT EXISTS root_version TEXT;
