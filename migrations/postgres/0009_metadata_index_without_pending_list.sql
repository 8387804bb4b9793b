-- Step 9: the metadata GIN index (step 2) writes each new entry into
-- its tree instead of a pending list. With fastupdate on, inserts append to a
-- pending list that is merged later, and the pages it used stay allocated: on
-- a thread of 300 checkpoints the index took 57 KiB instead of 32 KiB. Writing
-- directly costs a few page updates per checkpoint, and list(filter=...)
-- never has to scan a pending list. The official saver does not use this index.
ALTER INDEX checkpoints_metadata_gin_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('checkpoints_metadata_gin_idx'::regclass);
