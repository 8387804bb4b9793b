-- Step 10: the audit trail is written only through two functions, and every
-- entry is chained to the one before it.
--
-- Tamper-proof: the functions run as the schema's owner (SECURITY DEFINER,
-- search_path pinned); the triggers accept a write of an audit row only from
-- the owner inside those functions (a role's grants and any setting it can SET
-- are not enough), and refuse every UPDATE, every TRUNCATE, and every DELETE
-- but the purge's own of the one thread it was asked to purge. A plain INSERT,
-- with or without OVERRIDING SYSTEM VALUE, is refused too. The application's
-- role needs SELECT on the two tables and EXECUTE on the two functions, and no
-- write grant on either table.
--
-- Tamper-evident: each row carries its chain position `pos` and its `link`,
-- sha256(link of the entry before || durable_audit_digest(the row)), computed
-- by durable_audit_append while it holds the thread's head row locked, so
-- concurrent appends queue and cannot fork a chain. durable_audit_heads keeps
-- each thread's newest position and link (entries removed from the end are
-- missed too) and the base the chain starts from (what purges removed).
--
-- Rows written before this step are chained here, in seq order per thread
-- (the old UPDATE/DELETE trigger is dropped first and the new triggers come
-- after, all in this one transaction).

ALTER TABLE durable_audit ADD COLUMN IF NOT EXISTS pos BIGINT;
ALTER TABLE durable_audit ADD COLUMN IF NOT EXISTS link BYTEA;

CREATE TABLE IF NOT EXISTS durable_audit_heads (
    thread_id TEXT PRIMARY KEY,
    pos BIGINT NOT NULL DEFAULT 0,
    link BYTEA NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    base_pos BIGINT NOT NULL DEFAULT 0,
    base_link BYTEA NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    purged BIGINT NOT NULL DEFAULT 0,
    purged_at TIMESTAMPTZ
);

-- The canonical bytes of an entry: each value as `<octets>:<text>` (UTF-8),
-- `-` for NULL, the times as microseconds since the epoch. The verifier
-- (checkpointers.postgres._audit.row_digest) builds the same bytes itself.
-- Plain SQL expressions of STABLE functions only, so the planner inlines both
-- functions into the statement that calls them (a call of each costs ~10x).
CREATE OR REPLACE FUNCTION durable_audit_text(p_value TEXT) RETURNS TEXT
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_value IS NULL THEN '-'
           ELSE octet_length(convert_to(p_value, 'UTF8'))::text || ':' || p_value END
$$;

-- The digest names the helper with this schema (a SQL function's body is
-- resolved with its caller's search_path), hence the dynamic statement.
DO $do$
BEGIN
    EXECUTE format($f$
CREATE OR REPLACE FUNCTION durable_audit_digest(
    p_at TIMESTAMPTZ, p_recorded_at TIMESTAMPTZ, p_thread_id TEXT, p_checkpoint_ns TEXT,
    p_approval_id TEXT, p_item TEXT, p_actor TEXT, p_action TEXT, p_fingerprint TEXT,
    p_outcome TEXT, p_reason TEXT, p_dedupe_key TEXT
) RETURNS BYTEA
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256(convert_to(
        %1$I.durable_audit_text(round(extract(epoch FROM p_at) * 1000000)::bigint::text)
        || %1$I.durable_audit_text(round(extract(epoch FROM p_recorded_at) * 1000000)::bigint::text)
        || %1$I.durable_audit_text(p_thread_id) || %1$I.durable_audit_text(p_checkpoint_ns)
        || %1$I.durable_audit_text(p_approval_id) || %1$I.durable_audit_text(p_item)
        || %1$I.durable_audit_text(p_actor) || %1$I.durable_audit_text(p_action)
        || %1$I.durable_audit_text(p_fingerprint) || %1$I.durable_audit_text(p_outcome)
        || %1$I.durable_audit_text(p_reason) || %1$I.durable_audit_text(p_dedupe_key), 'UTF8'))
$$$f$, current_schema());
END
$do$;

DROP TRIGGER IF EXISTS durable_audit_append_only ON durable_audit;

-- Adoption: the rows of each thread chained in seq order, and its head.
DO $$
DECLARE
    r RECORD;
    cur TEXT;
    p BIGINT := 0;
    l BYTEA;
BEGIN
    FOR r IN
        SELECT seq, thread_id, durable_audit_digest(at, recorded_at, thread_id, checkpoint_ns,
                   approval_id, item, actor, action, fingerprint, outcome, reason,
                   dedupe_key) AS d
        FROM durable_audit WHERE link IS NULL ORDER BY thread_id, seq
    LOOP
        IF cur IS DISTINCT FROM r.thread_id THEN
            IF cur IS NOT NULL THEN
                INSERT INTO durable_audit_heads (thread_id, pos, link) VALUES (cur, p, l);
            END IF;
            cur := r.thread_id;
            p := 0;
            l := decode(repeat('00', 32), 'hex');
        END IF;
        p := p + 1;
        l := sha256(l || r.d);
        UPDATE durable_audit SET pos = p, link = l WHERE seq = r.seq;
    END LOOP;
    IF cur IS NOT NULL THEN
        INSERT INTO durable_audit_heads (thread_id, pos, link) VALUES (cur, p, l);
    END IF;
END
$$;

-- Entries in array order; an entry whose (thread, dedupe key) is stored
-- already is skipped. Returns how many were appended.
CREATE OR REPLACE FUNCTION durable_audit_append(p_entries JSONB) RETURNS INTEGER
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    t TEXT;
    e JSONB;
    h RECORD;
    v_now TIMESTAMPTZ := now();
    v_link BYTEA;
    v_set TEXT;
    n INTEGER := 0;
BEGIN
    IF jsonb_typeof(p_entries) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'durable_audit_append takes a JSON array of entries'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_set := set_config('langgraph_durable.audit_write', 'on', true);
    IF jsonb_array_length(p_entries) > 1 THEN
        -- every head is locked (or created) before the first entry, in thread
        -- order: two calls that append to the same threads queue, never deadlock
        FOR t IN
            SELECT DISTINCT x->>'thread_id' FROM jsonb_array_elements(p_entries) AS x ORDER BY 1
        LOOP
            PERFORM 1 FROM durable_audit_heads WHERE thread_id = t FOR UPDATE;
            IF NOT FOUND THEN
                INSERT INTO durable_audit_heads (thread_id) VALUES (t) ON CONFLICT DO NOTHING;
                PERFORM 1 FROM durable_audit_heads WHERE thread_id = t FOR UPDATE;
            END IF;
        END LOOP;
    END IF;
    FOR i IN 0 .. jsonb_array_length(p_entries) - 1 LOOP
        e := p_entries -> i;
        SELECT pos, link INTO h FROM durable_audit_heads
        WHERE thread_id = e->>'thread_id' FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO durable_audit_heads (thread_id) VALUES (e->>'thread_id')
            ON CONFLICT DO NOTHING;
            SELECT pos, link INTO h FROM durable_audit_heads
            WHERE thread_id = e->>'thread_id' FOR UPDATE;
        END IF;
        v_link := sha256(h.link || durable_audit_digest(
            (e->>'at')::timestamptz, v_now, e->>'thread_id', coalesce(e->>'checkpoint_ns', ''),
            e->>'approval_id', e->>'item', e->>'actor', e->>'action', e->>'fingerprint',
            e->>'outcome', e->>'reason', e->>'dedupe_key'));
        WITH ins AS (
            INSERT INTO durable_audit (at, recorded_at, thread_id, checkpoint_ns, approval_id,
                                       item, actor, action, fingerprint, outcome, reason,
                                       dedupe_key, pos, link)
            VALUES ((e->>'at')::timestamptz, v_now, e->>'thread_id',
                    coalesce(e->>'checkpoint_ns', ''), e->>'approval_id', e->>'item',
                    e->>'actor', e->>'action', e->>'fingerprint', e->>'outcome', e->>'reason',
                    e->>'dedupe_key', h.pos + 1, v_link)
            ON CONFLICT (thread_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            RETURNING 1
        )
        UPDATE durable_audit_heads SET pos = h.pos + 1, link = v_link
        FROM ins WHERE thread_id = e->>'thread_id';
        IF FOUND THEN
            n := n + 1;
        END IF;
    END LOOP;
    v_set := set_config('langgraph_durable.audit_write', '', true);
    RETURN n;
END
$$;

-- Retention: the thread's entries go; its head stays as the base of the
-- entries appended later, counting what went. Returns how many went.
CREATE OR REPLACE FUNCTION durable_audit_purge(p_thread_id TEXT) RETURNS BIGINT
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    n BIGINT;
BEGIN
    PERFORM 1 FROM durable_audit_heads WHERE thread_id = p_thread_id FOR UPDATE;
    PERFORM set_config('langgraph_durable.audit_write', 'on', true);
    PERFORM set_config('langgraph_durable.audit_purge', p_thread_id, true);
    DELETE FROM durable_audit WHERE thread_id = p_thread_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE durable_audit_heads
    SET base_pos = pos, base_link = link, purged = purged + n, purged_at = now()
    WHERE thread_id = p_thread_id;
    PERFORM set_config('langgraph_durable.audit_purge', '', true);
    PERFORM set_config('langgraph_durable.audit_write', '', true);
    RETURN n;
END
$$;

-- The functions resolve names in this schema only (pg_catalog comes first),
-- run as the owner of the audit table, and are callable only by the roles
-- the deployment grants EXECUTE.
DO $$
DECLARE
    owner NAME := (SELECT pg_get_userbyid(relowner) FROM pg_class
                   WHERE oid = 'durable_audit'::regclass);
BEGIN
    EXECUTE format('ALTER FUNCTION durable_audit_append(jsonb) SET search_path = %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION durable_audit_purge(text) SET search_path = %I, pg_temp',
                   current_schema());
    IF owner <> current_user THEN
        EXECUTE format('ALTER TABLE durable_audit_heads OWNER TO %I', owner);
        EXECUTE format('ALTER FUNCTION durable_audit_append(jsonb) OWNER TO %I', owner);
        EXECUTE format('ALTER FUNCTION durable_audit_purge(text) OWNER TO %I', owner);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION durable_audit_append(jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_audit_purge(text) FROM PUBLIC;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON durable_audit, durable_audit_heads FROM PUBLIC;

-- Every write of either table is refused unless it comes from the owner
-- inside one of the functions above, which set `langgraph_durable.audit_write`
-- (any role can SET that setting: it guards the owner's own sessions against
-- a stray statement; the owner check is what a role cannot pass). UPDATE of
-- an entry is refused always; DELETE of an entry only for the thread a purge
-- names; a head is never deleted. Qualified names only, search_path pinned:
-- the caller's search_path cannot change what the check means.
CREATE OR REPLACE FUNCTION durable_audit_refuse() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    writing BOOLEAN := current_setting('langgraph_durable.audit_write', true) = 'on'
        AND current_user = (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID);
BEGIN
    IF writing THEN
        IF TG_OP = 'INSERT' THEN
            RETURN NEW;
        ELSIF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'durable_audit_heads' THEN
            RETURN NEW;
        ELSIF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'durable_audit'
              AND OLD.thread_id = current_setting('langgraph_durable.audit_purge', true) THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'entries are written only by the library: durable_audit_append() appends, '
                     'durable_audit_purge() (interrupts.purge_audit) removes one thread''s';
END
$$;

CREATE OR REPLACE FUNCTION durable_audit_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: TRUNCATE refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'entries are removed only by the retention call interrupts.purge_audit()';
END
$$;

CREATE TRIGGER durable_audit_written_by_the_library
    BEFORE INSERT OR UPDATE OR DELETE ON durable_audit
    FOR EACH ROW EXECUTE FUNCTION durable_audit_refuse();

CREATE TRIGGER durable_audit_heads_written_by_the_library
    BEFORE INSERT OR UPDATE OR DELETE ON durable_audit_heads
    FOR EACH ROW EXECUTE FUNCTION durable_audit_refuse();

CREATE TRIGGER durable_audit_heads_no_truncate
    BEFORE TRUNCATE ON durable_audit_heads
    FOR EACH STATEMENT EXECUTE FUNCTION durable_audit_refuse_truncate();
