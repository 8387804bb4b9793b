-- Step 13: a thread's activity mark (step 12) is rewritten at most once a
-- minute instead of once a second. A thread whose steps come seconds apart (an
-- LLM call each) then updates its mark about once a minute, not at every
-- checkpoint; every other checkpoint costs one index probe. Retention adds the
-- minute to the idle time it asks for, so it never takes a thread written to
-- within that time for idle.
DO $$
BEGIN
    EXECUTE format($fn$
        CREATE OR REPLACE FUNCTION %1$I.durable_thread_active() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER AS $body$
        BEGIN
            PERFORM 1 FROM %1$I.durable_thread_activity
            WHERE thread_id = NEW.thread_id AND active_at >= now() - interval '1 minute'
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
