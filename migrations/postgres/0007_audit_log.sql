-- Step 7: the append-only audit trail.
-- One row per decision attempt (allowed or refused), timeout, escalation,
-- stale re-ask and compensation step. Request payloads are never stored here,
-- only their fingerprints. `seq` orders a thread's entries.
CREATE TABLE IF NOT EXISTS durable_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    approval_id TEXT,
    item TEXT,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    fingerprint TEXT,
    outcome TEXT NOT NULL,
    reason TEXT,
    -- entries written from a node (which may re-run) carry a key: once per thread
    dedupe_key TEXT
);

CREATE INDEX IF NOT EXISTS durable_audit_thread_idx ON durable_audit (thread_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS durable_audit_dedupe_idx
    ON durable_audit (thread_id, dedupe_key) WHERE dedupe_key IS NOT NULL;

-- The database refuses UPDATE, TRUNCATE and DELETE of audit rows. The one
-- exception is the retention call (interrupts.purge_audit): in its own
-- transaction it sets `langgraph_durable.audit_purge` (transaction-local) to
-- the thread id it deletes, and only that thread's rows may go. A plain
-- `DELETE FROM durable_audit ...` or `UPDATE` through SQL raises.
CREATE OR REPLACE FUNCTION durable_audit_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.thread_id = current_setting('langgraph_durable.audit_purge', true) THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION 'durable_audit is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'entries are removed only by the retention call interrupts.purge_audit()';
END
$$;

CREATE OR REPLACE FUNCTION durable_audit_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'durable_audit is append-only: TRUNCATE refused'
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'entries are removed only by the retention call interrupts.purge_audit()';
END
$$;

CREATE TRIGGER durable_audit_append_only
    BEFORE UPDATE OR DELETE ON durable_audit
    FOR EACH ROW EXECUTE FUNCTION durable_audit_refuse();

CREATE TRIGGER durable_audit_no_truncate
    BEFORE TRUNCATE ON durable_audit
    FOR EACH STATEMENT EXECUTE FUNCTION durable_audit_refuse_truncate();
