-- Step 12: when each thread was last written, for retention (delete or prune
-- threads idle longer than a given age). One row per thread, indexed on the
-- time, so finding the idle threads reads the old end of an index instead of
-- every checkpoint.

CREATE TABLE IF NOT EXISTS durable_thread_activity (
    thread_id TEXT PRIMARY KEY,
    active_at TIMESTAMPTZ NOT NULL,
    -- set by a keep-latest retention pass, cleared by the next checkpoint: a
    -- pruned thread is not pruned again until it has something new to prune
    pruned BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS durable_thread_activity_idle_idx
    ON durable_thread_activity (active_at, thread_id);
CREATE INDEX IF NOT EXISTS durable_thread_activity_unpruned_idx
    ON durable_thread_activity (active_at, thread_id) WHERE NOT pruned;

-- Every new checkpoint row marks its thread active, whoever inserts it (this
-- library, langgraph-checkpoint-postgres on the same tables, a copy_thread).
-- A row rewritten in place (upgrade_all) is no activity: only INSERT fires.
-- Within a second of the last mark nothing is written, so a run of fast steps
-- costs one index probe per checkpoint; retention allows for that second.
-- The table is named with the saver's schema in the body (resolved whatever
-- search_path the writing connection has, without a per-call SET). SECURITY
-- DEFINER: a role granted only the checkpoint tables still marks activity.
DO $$
BEGIN
    EXECUTE format($fn$
        CREATE OR REPLACE FUNCTION %1$I.durable_thread_active() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER AS $body$
        BEGIN
            PERFORM 1 FROM %1$I.durable_thread_activity
            WHERE thread_id = NEW.thread_id AND active_at >= now() - interval '1 second'
              AND NOT pruned;
            IF NOT FOUND THEN
                INSERT INTO %1$I.durable_thread_activity AS a (thread_id, active_at)
                VALUES (NEW.thread_id, now())
                ON CONFLICT (thread_id) DO UPDATE
                SET active_at = EXCLUDED.active_at, pruned = false;
            END IF;
            RETURN NULL;
        END
        $body$
    $fn$, current_schema());
END
$$;
DROP TRIGGER IF EXISTS durable_thread_active ON checkpoints;
CREATE TRIGGER durable_thread_active
    AFTER INSERT ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION durable_thread_active();

-- Threads stored before this step count as active now: their idle time is
-- measured from the upgrade (the checkpoints hold no reliable write time).
INSERT INTO durable_thread_activity (thread_id, active_at)
SELECT DISTINCT thread_id, now() FROM checkpoints
ON CONFLICT (thread_id) DO NOTHING;
