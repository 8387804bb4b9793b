-- Step 15: list(None, filter={"source": ...} and/or {"step": ...}, limit=n)
-- across threads stops after n rows. The metadata GIN index (step 2) finds
-- every checkpoint that matches, in no order, so the newest n were kept only
-- after reading all of them (at millions of checkpoints, tens of thousands of
-- rows for 10). These indexes hold the two keys LangGraph writes on every
-- checkpoint, in the listing's order: a backward scan reads the newest matches
-- first and stops at the limit. A filter of only these keys with scalar values
-- is written as equalities on them (see LIST_PREDICATES); any other filter
-- still uses the GIN index. Not partial: the planner estimates how many rows
-- match a value from the statistics of an expression index without a WHERE
-- clause only, and with those estimates it picks the ordered scan.
CREATE INDEX IF NOT EXISTS checkpoints_metadata_source_idx
    ON checkpoints ((metadata -> 'source'), checkpoint_id, thread_id, checkpoint_ns);
CREATE INDEX IF NOT EXISTS checkpoints_metadata_step_idx
    ON checkpoints ((metadata -> 'step'), checkpoint_id, thread_id, checkpoint_ns);
