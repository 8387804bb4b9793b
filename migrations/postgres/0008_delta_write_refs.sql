-- Step 8: a delta may refer to the pending writes that hold its new items
-- instead of copying them. `writes_of` names the checkpoint those writes belong
-- to (same thread and namespace, same channel); the delta's bytes list the
-- task ids and indexes. NULL for every other row, so existing rows are unchanged
-- and no index is needed: reads and deletes reach the writes through the
-- primary key of checkpoint_writes.
ALTER TABLE checkpoint_blobs ADD COLUMN IF NOT EXISTS writes_of TEXT;
