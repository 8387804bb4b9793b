-- Step 11: the notification outbox. An event row is written by a trigger in
-- the same statement as the fact it announces, so a notification is never
-- sent for something that was not stored, and never lost for something that
-- was:
--
-- * requested / escalated: a marked approval or batch wait is indexed
--   (an INSERT into durable_waits; escalation_level > 0 is an escalation);
-- * decided / timed_out: a decision or a batch's completion is compare-and-set
--   into durable_decisions (batch items and amendments are not announced);
-- * reminded: a reminder's audit entry is appended.
--
-- The worker adds "expiring" events itself, under ids derived from the wait,
-- so a restart does not add one twice. Every id is derived from what it
-- announces (kind, thread, approval or audit position): a trigger that fires
-- again for the same fact adds nothing (ON CONFLICT DO NOTHING).
--
-- Delivery state lives in the same row: a worker claims due rows with a lease
-- (lease_owner, lease_until), and settles each as delivered, retried later
-- (next_attempt_at) or parked (parked_at) once its attempts are spent.
-- Delivered rows are kept (a re-fired trigger then still adds nothing).

CREATE TABLE IF NOT EXISTS durable_outbox (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    event_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    payload JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_owner TEXT,
    lease_until TIMESTAMPTZ,
    delivered_at TIMESTAMPTZ,
    parked_at TIMESTAMPTZ,
    last_error TEXT
);

-- What a worker claims: undelivered, unparked rows, by when they are due.
CREATE INDEX IF NOT EXISTS durable_outbox_due_idx
    ON durable_outbox (next_attempt_at, seq) WHERE delivered_at IS NULL AND parked_at IS NULL;
CREATE INDEX IF NOT EXISTS durable_outbox_parked_idx
    ON durable_outbox (seq) WHERE delivered_at IS NULL AND parked_at IS NOT NULL;

-- kind ':' md5(<length of the thread id> ':' <thread id> <ref>): injective in
-- (thread, ref), the same text the Python side derives (checkpointers._outbox).
CREATE OR REPLACE FUNCTION durable_outbox_id(p_kind TEXT, p_thread_id TEXT, p_ref TEXT)
RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_kind || ':' || md5(length(p_thread_id)::text || ':' || p_thread_id || p_ref)
$$;

-- The trigger functions name this schema's tables (a trigger runs with its
-- caller's search_path), hence the dynamic statements.
DO $do$
BEGIN
    EXECUTE format($f$
CREATE OR REPLACE FUNCTION durable_outbox_on_wait() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    k TEXT := CASE WHEN NEW.escalation_level > 0 THEN 'escalated' ELSE 'requested' END;
BEGIN
    INSERT INTO %1$I.durable_outbox (event_id, kind, thread_id, approval_id, payload)
    VALUES (%1$I.durable_outbox_id(k, NEW.thread_id, NEW.interrupt_id), k, NEW.thread_id,
            NEW.interrupt_id,
            jsonb_build_object('wait_kind', NEW.kind, 'deadline', NEW.deadline,
                               'approvers', to_jsonb(NEW.approvers),
                               'escalation_level', NEW.escalation_level,
                               'checkpoint_ns', NEW.checkpoint_ns))
    ON CONFLICT (event_id) DO NOTHING;
    RETURN NULL;
END
$$$f$, current_schema());

    EXECUTE format($f$
CREATE OR REPLACE FUNCTION durable_outbox_on_decision() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    k TEXT := CASE WHEN coalesce((NEW.decision->>'timed_out')::boolean, false)
                   THEN 'timed_out' ELSE 'decided' END;
BEGIN
    INSERT INTO %1$I.durable_outbox (event_id, kind, thread_id, approval_id, payload)
    VALUES (%1$I.durable_outbox_id(k, NEW.thread_id, NEW.key), k, NEW.thread_id, NEW.key,
            jsonb_build_object('decision', NEW.decision))
    ON CONFLICT (event_id) DO NOTHING;
    RETURN NULL;
END
$$$f$, current_schema());

    EXECUTE format($f$
CREATE OR REPLACE FUNCTION durable_outbox_on_reminder() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO %1$I.durable_outbox (event_id, kind, thread_id, approval_id, payload)
    VALUES (%1$I.durable_outbox_id('reminded', NEW.thread_id, 'audit:' || NEW.seq::text),
            'reminded', NEW.thread_id, NEW.approval_id,
            jsonb_build_object('by', NEW.actor, 'reason', NEW.reason))
    ON CONFLICT (event_id) DO NOTHING;
    RETURN NULL;
END
$$$f$, current_schema());
END
$do$;

DROP TRIGGER IF EXISTS durable_outbox_wait ON durable_waits;
CREATE TRIGGER durable_outbox_wait AFTER INSERT ON durable_waits
    FOR EACH ROW WHEN (NEW.kind IN ('approval', 'batch'))
    EXECUTE FUNCTION durable_outbox_on_wait();

DROP TRIGGER IF EXISTS durable_outbox_decision ON durable_decisions;
CREATE TRIGGER durable_outbox_decision AFTER INSERT ON durable_decisions
    FOR EACH ROW WHEN (strpos(NEW.key, '/') = 0
                       AND NEW.decision->>'type' IN ('decision', 'batch_complete'))
    EXECUTE FUNCTION durable_outbox_on_decision();

DROP TRIGGER IF EXISTS durable_outbox_reminder ON durable_audit;
CREATE TRIGGER durable_outbox_reminder AFTER INSERT ON durable_audit
    FOR EACH ROW WHEN (NEW.action = 'remind' AND NEW.outcome = 'recorded'
                       AND NEW.approval_id IS NOT NULL)
    EXECUTE FUNCTION durable_outbox_on_reminder();
