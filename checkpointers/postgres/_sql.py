"""Every SQL statement of the PostgreSQL savers, as named templates.

``{s}`` is the saver's schema; :func:`render` fills it in with
:class:`psycopg.sql.Identifier` once per saver (no I/O). Values always go
through ``%(name)s`` placeholders. Literal braces are doubled (``'{{}}'``)
because the templates go through :meth:`psycopg.sql.SQL.format`.
"""

from __future__ import annotations

import re
from typing import Any

from psycopg import sql

LAYOUT_TABLE = "langgraph_durable_layout"

# -- setup ---------------------------------------------------------------------

# One key per schema, so two apps sharing a database migrate independently.
SETUP_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('langgraph-durable:' || %(schema)s, 0))"
# one statement each: a connection in pipeline mode refuses a script
SETUP_SCHEMA = "CREATE SCHEMA IF NOT EXISTS {s}"
SETUP_PREPARE = """
CREATE TABLE IF NOT EXISTS {s}.{layout} (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)"""
SETUP_CURRENT = "SELECT coalesce(max(version), 0) FROM {s}.{layout}"
SETUP_SEARCH_PATH = "SELECT set_config('search_path', %(path)s, true)"
SETUP_RECORD = "INSERT INTO {s}.{layout} (version, name) VALUES (%(version)s, %(name)s)"
LAYOUT_VERSION = "SELECT max(version) FROM {s}.{layout}"
# Whether the schema's checkpoints table is hash-partitioned, and into how many.
SETUP_PARTITIONS = """
SELECT c.relkind = 'p', (SELECT count(*) FROM pg_inherits AS i WHERE i.inhparent = c.oid)
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = 'checkpoints'"""

# -- reads ---------------------------------------------------------------------

# The checkpoint rows are chosen (and limited) first, then each one's blobs and
# writes are gathered by primary-key lookups: a lateral join placed before the
# ORDER BY/LIMIT would run for every candidate row.
#
# Values are fetched once for all the checkpoints of the statement,
# not per checkpoint: the consecutive checkpoints of a history share their
# chains. For each (thread, namespace, channel, root) the statement reads one
# range of the primary key, from the root (the snapshot the chains start from)
# up to the newest version any listed checkpoint uses, and the pending writes
# those deltas refer to with one range of checkpoint_writes' primary key. Those
# rows come back once, in the arrays of the statement's first row (NULL in the
# others); rows of other branches in a range are ignored when decoding.
SELECT_TUPLES = """
WITH c AS MATERIALIZED (
    SELECT c0.*, row_number() OVER () AS rn FROM ({inner}) AS c0
), heads AS (
    -- values kept inline have no blob, except behind the `true` marker of a
    -- DeltaChannel snapshot: probe only for the others
    SELECT c.thread_id, c.checkpoint_ns, v.key AS channel, v.value AS version
    FROM c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
    WHERE coalesce(c.checkpoint -> 'channel_values' -> v.key, 'true'::jsonb) = 'true'::jsonb
), spans AS (
    SELECT h.thread_id, h.checkpoint_ns, h.channel,
           {held_lo} AS lo, max(h.version) AS hi
    FROM heads AS h
    CROSS JOIN LATERAL (
        -- LATERAL ... OFFSET 0 keeps these parameterized index scans whatever
        -- the table statistics say
        SELECT b.root_version FROM {s}.checkpoint_blobs AS b
        WHERE b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns
          AND b.channel = h.channel AND b.version = h.version
        OFFSET 0
    ) AS head
    GROUP BY 1, 2, 3, 4
), vals AS (
    SELECT sp.thread_id, sp.checkpoint_ns, sp.lo, sp.hi, bl.channel, bl.version, bl.type, bl.blob,
           bl.base_version, bl.writes_of
    FROM spans AS sp
    CROSS JOIN LATERAL (
        SELECT b.channel, b.version, b.type, b.blob, b.base_version, b.writes_of
        FROM {s}.checkpoint_blobs AS b
        WHERE b.thread_id = sp.thread_id AND b.checkpoint_ns = sp.checkpoint_ns
          AND b.channel = sp.channel AND b.version >= sp.lo AND b.version <= sp.hi
        OFFSET 0
    ) AS bl
), wspans AS (
    SELECT thread_id, checkpoint_ns, channel, min(writes_of) AS lo, max(writes_of) AS hi
    FROM vals WHERE writes_of IS NOT NULL AND vals.lo < vals.hi
    GROUP BY thread_id, checkpoint_ns, channel, vals.lo
), rws AS (
    SELECT ws.thread_id, ws.checkpoint_ns, x.checkpoint_id, x.task_id, x.idx, x.type, x.blob
    FROM wspans AS ws
    CROSS JOIN LATERAL (
        SELECT cw.checkpoint_id, cw.task_id, cw.idx, cw.type, cw.blob
        FROM {s}.checkpoint_writes AS cw
        WHERE cw.thread_id = ws.thread_id AND cw.checkpoint_ns = ws.checkpoint_ns
          AND cw.checkpoint_id >= ws.lo AND cw.checkpoint_id <= ws.hi
          AND cw.channel = ws.channel AND cw.idx >= 0
          -- deltas refer to msgpack lists only: no type array is sent
          AND cw.type = 'msgpack'
        OFFSET 0
    ) AS x
)
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
       c.checkpoint, c.metadata, c.metadata_exact, c.schema_version,
       b.channels, b.types, b.blobs,
       w.task_ids, w.channels, w.types, w.blobs, w.paths, w.idxs,
       ps.types, ps.blobs,
       -- last, so the positions above stay as other readers index them
       b.versions, b.threads, b.nss,
       rw.threads, rw.nss, rw.cids, rw.task_ids, rw.idxs, NULL::text[], rw.blobs,
       b.bases, b.writes_ofs, b.channel{row_bytes}
-- ordered before the wide columns join (nested loops keep the order, so the
-- final ORDER BY sorts nothing)
FROM (
    SELECT * FROM c ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC
) AS c
LEFT JOIN LATERAL (
    -- one channel (the common case): sent once, not per row (each array
    -- element costs the round trip ~1 us)
    SELECT CASE WHEN min(channel) < max(channel) THEN array_agg(channel) END AS channels,
           CASE WHEN min(channel) = max(channel) THEN min(channel) END AS channel,
           array_agg(version) AS versions,
           -- NULL for a delta (type is NOT NULL): most rows send no type
           array_agg(NULLIF(type, 'delta')) AS types, array_agg(blob) AS blobs,
           array_agg(thread_id) AS threads, array_agg(checkpoint_ns) AS nss,
           array_agg(base_version) AS bases, array_agg(writes_of) AS writes_ofs
    FROM vals WHERE c.rn = 1
) AS b ON true
LEFT JOIN LATERAL (
    SELECT array_agg(thread_id) AS threads, array_agg(checkpoint_ns) AS nss,
           array_agg(checkpoint_id) AS cids, array_agg(task_id) AS task_ids,
           array_agg(idx) AS idxs, array_agg(blob) AS blobs
    FROM rws WHERE c.rn = 1
) AS rw ON true
LEFT JOIN LATERAL (
    SELECT array_agg(cw.task_id) AS task_ids, array_agg(cw.channel) AS channels,
           array_agg(cw.type) AS types, array_agg(cw.blob) AS blobs,
           array_agg(cw.task_path) AS paths, array_agg(cw.idx) AS idxs
    FROM {s}.checkpoint_writes AS cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns
      AND cw.checkpoint_id = c.checkpoint_id
) AS w ON true
LEFT JOIN LATERAL (
    -- checkpoints of format < 4 keep their pending sends as writes of the parent
    SELECT array_agg(cw.type ORDER BY cw.task_path, cw.task_id, cw.idx) AS types,
           array_agg(cw.blob ORDER BY cw.task_path, cw.task_id, cw.idx) AS blobs
    FROM {s}.checkpoint_writes AS cw
    WHERE (c.checkpoint ->> 'v')::int < 4 AND c.parent_checkpoint_id IS NOT NULL
      AND cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns
      AND cw.checkpoint_id = c.parent_checkpoint_id AND cw.channel = '__pregel_tasks'
) AS ps ON true
ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC"""

_CHECKPOINT_COLS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, "
    "metadata, metadata_exact, schema_version"
)

# A chain starts at its root (the snapshot); in get_tuple, a version the saver
# holds whole (the value it just wrote or read) starts at itself: only
# its own row is fetched, whose header, length and CRC the client checks against
# the held bytes (if they differ, it reads again with the chains).
_ROOT = "coalesce(head.root_version, h.version)"
_HELD_LO = f"""CASE WHEN EXISTS (
               SELECT 1 FROM unnest(%(held_channels)s::text[], %(held_versions)s::text[])
                   AS k(channel, version)
               WHERE k.channel = h.channel AND k.version = h.version
           ) THEN h.version ELSE {_ROOT} END"""
_TUPLES = SELECT_TUPLES.replace("{held_lo}", _ROOT)
_HELD_TUPLES = SELECT_TUPLES.replace("{held_lo}", _HELD_LO).replace("{row_bytes}", "")
# list(): each row also says what its checkpoint row weighs (inline values can
# be large strings), so pages stay near a size in bytes (see _listing)
LIST_TUPLES = _TUPLES.replace(
    "{row_bytes}",
    ",\n       pg_column_size(c.checkpoint) + pg_column_size(c.metadata)"
    " + coalesce(pg_column_size(c.metadata_exact), 0)",
)
_TUPLES = _TUPLES.replace("{row_bytes}", "")
# get_tuple reads one checkpoint: every value row and write is of its thread
# and namespace, so those arrays are not sent (NULL: the row's own; ~10% of
# the statement's time at 300 steps)
_AGG = "array_agg(thread_id) AS threads, array_agg(checkpoint_ns) AS nss,\n           "
assert _HELD_TUPLES.count(_AGG) == 2
_HELD_TUPLES = _HELD_TUPLES.replace(_AGG, "")
for _cols in ("b.threads, b.nss", "rw.threads, rw.nss"):
    assert _HELD_TUPLES.count(_cols) == 1, _cols
    _HELD_TUPLES = _HELD_TUPLES.replace(_cols, "NULL::text[], NULL::text[]")
SELECT_TUPLES = _TUPLES

GET_LATEST = _HELD_TUPLES.replace(
    "{inner}",
    f"SELECT {_CHECKPOINT_COLS} FROM {{s}}.checkpoints "
    "WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s "
    "ORDER BY checkpoint_id DESC LIMIT 1",
)
GET_BY_ID = _HELD_TUPLES.replace(
    "{inner}",
    f"SELECT {_CHECKPOINT_COLS} FROM {{s}}.checkpoints "
    "WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s "
    "AND checkpoint_id = %(checkpoint_id)s",
)
# list(): the WHERE clause is assembled from these fixed predicates only. The
# order is total (ids repeat across threads: copy_thread keeps them), so a page
# continues exactly after the last row of the previous one (`after`, keyset
# pagination). Its first half is an index condition; with the thread and the
# namespace fixed, the rest is always true.
LIST_INNER = (
    f"SELECT {_CHECKPOINT_COLS} FROM {{s}}.checkpoints {{where}} "
    "ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"
)
LIST_PREDICATES = {
    "thread_id": "thread_id = %(thread_id)s",
    "checkpoint_ns": "checkpoint_ns = %(checkpoint_ns)s",
    "checkpoint_id": "checkpoint_id = %(checkpoint_id)s",
    "filter": "metadata @> %(filter)s",
    # a filter of only these keys with scalar values, instead of "filter" (a
    # scalar contains only itself): the indexes of layout step 15 answer them
    # in the listing's order, so the scan stops at the limit
    "meta_source": "metadata -> 'source' = %(meta_source)s",
    "meta_step": "metadata -> 'step' = %(meta_step)s",
    "before": "checkpoint_id < %(before)s",
    "after": (
        "checkpoint_id <= %(after_id)s AND (checkpoint_id < %(after_id)s"
        " OR (thread_id, checkpoint_ns) < (%(after_thread)s, %(after_ns)s))"
    ),
}
LIST_LIMIT = " LIMIT %(limit)s"
# saver.schema_version(config): one primary-key probe
SCHEMA_VERSION_LATEST = (
    "SELECT schema_version FROM {s}.checkpoints "
    "WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)
SCHEMA_VERSION_BY_ID = (
    "SELECT schema_version FROM {s}.checkpoints "
    "WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s "
    "AND checkpoint_id = %(checkpoint_id)s"
)

# -- writes --------------------------------------------------------------------

# A put is this one statement: the new blobs, the checkpoint row, and the
# cleanup of the wait index entries the thread has moved past. One round trip,
# atomic without an explicit transaction.
# A delta is stored only together with its base, which the
# statement locks against deletion (`ok`); if another process deleted it since
# the saver cached it, nothing is written and the core retries the put with
# whole values.
PUT = """
WITH RECURSIVE waits AS (
    -- first, so pg_stat_activity's truncated text shows it (RECURSIVE allows
    -- the forward reference to `ok`; nothing here is recursive)
    DELETE FROM {s}.durable_waits
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
      AND checkpoint_id < %(checkpoint_id)s AND (SELECT ok FROM ok)
), u AS (
    SELECT * FROM unnest(%(channels)s::text[], %(versions)s::text[], %(types)s::text[],
                         %(blobs)s::bytea[], %(bases)s::text[], %(roots)s::text[],
                         %(writes_of)s::text[])
        AS u(channel, version, type, blob, base, root, writes_of)
), ok AS (
    SELECT NOT EXISTS (
        SELECT 1 FROM u WHERE u.base IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM {s}.checkpoint_blobs AS bl
            WHERE bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(checkpoint_ns)s
              AND bl.channel = u.channel AND bl.version = u.base
            FOR KEY SHARE)
    ) AND NOT EXISTS (
        -- every pending write a delta refers to is stored with exactly the
        -- bytes the delta was cut from (a retried task keeps its first write)
        SELECT 1 FROM unnest(%(r_channels)s::text[], %(r_tasks)s::text[], %(r_idxs)s::int[],
                             %(r_md5s)s::text[]) AS r(channel, task_id, idx, md5)
        WHERE NOT EXISTS (
            SELECT 1 FROM {s}.checkpoint_writes AS cw
            WHERE cw.thread_id = %(thread_id)s AND cw.checkpoint_ns = %(checkpoint_ns)s
              AND cw.checkpoint_id = %(parent_id)s AND cw.task_id = r.task_id
              AND cw.idx = r.idx AND cw.channel = r.channel AND md5(cw.blob) = r.md5
            FOR KEY SHARE)
    ) AS ok
), blobs AS (
    INSERT INTO {s}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob,
                                      base_version, root_version, writes_of)
    SELECT %(thread_id)s, %(checkpoint_ns)s, u.channel, u.version, u.type, u.blob, u.base,
           u.root, u.writes_of
    FROM u WHERE (SELECT ok FROM ok)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO {s}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                             checkpoint, metadata, metadata_exact, schema_version)
SELECT %(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(parent_id)s,
       %(checkpoint)s, %(metadata)s, %(metadata_exact)s, %(schema_version)s
WHERE (SELECT ok FROM ok)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    checkpoint = EXCLUDED.checkpoint,
    metadata = EXCLUDED.metadata,
    metadata_exact = EXCLUDED.metadata_exact,
    schema_version = EXCLUDED.schema_version
RETURNING true"""

# put_writes: the writes and their wait-index entries, one statement.
# Special channels (errors, interrupts...) replace a previous write of the same
# task and index; regular writes keep the first one (a retried task). A new
# `__interrupt__` write of a task replaces its earlier entries (other ids:
# deleting and upserting one row in one statement is undefined).
_PUT_WRITES = """
WITH replaced AS (
    DELETE FROM {s}.durable_waits
    WHERE %(has_interrupt)s AND thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
      AND checkpoint_id = %(checkpoint_id)s AND task_id = %(task_id)s
      AND interrupt_id <> ALL(%(w_ids)s::text[])
), writes AS (
    INSERT INTO {s}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id,
                                       task_path, idx, channel, type, blob)
    SELECT %(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(task_id)s, %(task_path)s,
           u.idx, u.channel, u.type, u.blob
    FROM unnest(%(idxs)s::int[], %(channels)s::text[], %(types)s::text[],
                %(blobs)s::bytea[]) AS u(idx, channel, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) {on_conflict}
)
INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns, checkpoint_id, task_id,
                               kind, deadline, approvers, escalation_level, value_type, value)
SELECT %(thread_id)s, u.interrupt_id, %(checkpoint_ns)s, %(checkpoint_id)s, %(task_id)s, u.kind,
       u.deadline, coalesce(
           (SELECT array_agg(a) FROM jsonb_array_elements_text(u.approvers) AS a), '{{}}'),
       u.level, u.value_type, u.value
FROM unnest(%(w_ids)s::text[], %(w_kinds)s::text[], %(w_deadlines)s::timestamptz[],
            %(w_approvers)s::jsonb[], %(w_levels)s::int[], %(w_types)s::text[],
            %(w_values)s::bytea[])
     AS u(interrupt_id, kind, deadline, approvers, level, value_type, value)
ON CONFLICT (thread_id, interrupt_id) DO UPDATE SET
    checkpoint_ns = EXCLUDED.checkpoint_ns, checkpoint_id = EXCLUDED.checkpoint_id,
    task_id = EXCLUDED.task_id, kind = EXCLUDED.kind, deadline = EXCLUDED.deadline,
    approvers = EXCLUDED.approvers,
    escalation_level = EXCLUDED.escalation_level, value_type = EXCLUDED.value_type,
    value = EXCLUDED.value"""
PUT_WRITES_UPSERT = _PUT_WRITES.replace(
    "{on_conflict}",
    "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob, "
    "task_path = EXCLUDED.task_path",
)
PUT_WRITES_INSERT = _PUT_WRITES.replace("{on_conflict}", "DO NOTHING")

# -- transaction control (the multi-statement operations) ---------------------------

BEGIN_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ"
BEGIN = "BEGIN"
COMMIT = "COMMIT"

# -- delta channel history -----------------------------------------------------------

# One query: walk the target's ancestors (nearest first) carrying the channels
# still looking for a seed; stop once every channel has one. Each ancestor
# yields its writes to the channels still open there and, for the channels it
# seeds, its stored value (an inline jsonb value or a blob).
DELTA_HISTORY = """
WITH RECURSIVE target AS (
    SELECT parent_checkpoint_id FROM {s}.checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
      AND (%(checkpoint_id)s::text IS NULL OR checkpoint_id = %(checkpoint_id)s::text)
    ORDER BY checkpoint_id DESC LIMIT 1
), chain(depth, checkpoint_id, parent_checkpoint_id, checkpoint, open, seeded) AS (
    SELECT 1, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, o.open, s.seeded
    FROM target
    JOIN {s}.checkpoints AS c
      ON c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
     AND c.checkpoint_id = target.parent_checkpoint_id
    CROSS JOIN LATERAL (SELECT %(channels)s::text[] AS open) AS o
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(ch), '{{}}') AS seeded FROM unnest(o.open) AS ch
        WHERE (c.checkpoint -> 'channel_values') ? ch OR EXISTS (
            SELECT 1 FROM {s}.checkpoint_blobs AS bl
            WHERE bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(checkpoint_ns)s
              AND bl.channel = ch AND bl.type <> 'empty'
              AND bl.version = c.checkpoint -> 'channel_versions' ->> ch)
    ) AS s
    UNION ALL
    SELECT chain.depth + 1, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, o.open, s.seeded
    FROM chain
    JOIN {s}.checkpoints AS c
      ON c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
     AND c.checkpoint_id = chain.parent_checkpoint_id
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(ch), '{{}}') AS open FROM unnest(chain.open) AS ch
        WHERE ch <> ALL(chain.seeded)
    ) AS o
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(ch), '{{}}') AS seeded FROM unnest(o.open) AS ch
        WHERE (c.checkpoint -> 'channel_values') ? ch OR EXISTS (
            SELECT 1 FROM {s}.checkpoint_blobs AS bl
            WHERE bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(checkpoint_ns)s
              AND bl.channel = ch AND bl.type <> 'empty'
              AND bl.version = c.checkpoint -> 'channel_versions' ->> ch)
    ) AS s
    WHERE cardinality(o.open) > 0
)
SELECT chain.depth, 'w' AS kind, cw.channel, cw.type, cw.blob, NULL::jsonb AS inline,
       cw.task_id, cw.task_path, cw.idx
FROM chain
JOIN {s}.checkpoint_writes AS cw
  ON cw.thread_id = %(thread_id)s AND cw.checkpoint_ns = %(checkpoint_ns)s
 AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = ANY(chain.open)
UNION ALL
SELECT chain.depth, 's', ch, bl.type, bl.blob, chain.checkpoint -> 'channel_values' -> ch,
       bl.version, NULL, NULL
FROM chain
CROSS JOIN LATERAL unnest(chain.seeded) AS ch
LEFT JOIN {s}.checkpoint_blobs AS bl
  ON bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(checkpoint_ns)s
 AND bl.channel = ch AND bl.type <> 'empty'
 AND bl.version = chain.checkpoint -> 'channel_versions' ->> ch"""

# One value's chain: the row of `version` and, if it is a delta, the
# versions from its root up. For the rare reads that did not fetch it already.
VALUE_CHAIN = """
SELECT bl.version, bl.type, bl.blob, bl.writes_of,
       rw.task_ids, rw.idxs, rw.types, rw.blobs, bl.base_version
FROM {s}.checkpoint_blobs AS head
JOIN {s}.checkpoint_blobs AS bl
  ON bl.thread_id = head.thread_id AND bl.checkpoint_ns = head.checkpoint_ns
 AND bl.channel = head.channel AND bl.version <= head.version
 AND bl.version >= coalesce(head.root_version, head.version)
LEFT JOIN LATERAL (
    SELECT array_agg(cw.task_id) AS task_ids, array_agg(cw.idx) AS idxs,
           array_agg(cw.type) AS types, array_agg(cw.blob) AS blobs
    FROM {s}.checkpoint_writes AS cw
    WHERE cw.thread_id = bl.thread_id AND cw.checkpoint_ns = bl.checkpoint_ns
      AND cw.checkpoint_id = bl.writes_of AND cw.channel = bl.channel AND cw.idx >= 0
) AS rw ON true
WHERE head.thread_id = %(thread_id)s AND head.checkpoint_ns = %(checkpoint_ns)s
  AND head.channel = %(channel)s AND head.version = %(version)s"""

# -- wait index ---------------------------------------------------------------------

LIST_WAITS = """
SELECT thread_id, checkpoint_ns, checkpoint_id, interrupt_id, kind, deadline, approvers,
       escalation_level, value_type, value, created_at
FROM {s}.durable_waits
WHERE (%(kind)s::text IS NULL OR kind = %(kind)s::text)
  AND (%(approver)s::text IS NULL OR %(approver)s::text = ANY(approvers)
       OR cardinality(approvers) = 0)
  AND (%(thread_id)s::text IS NULL OR thread_id = %(thread_id)s::text)
ORDER BY deadline ASC NULLS LAST, created_at, thread_id, interrupt_id
LIMIT %(limit)s"""


# a quoted literal (kept as is), a comment, or a run of whitespace
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|(?:--[^\n]*|\s)+")
# the spaces a statement needs beside these: none
_TIGHT = frozenset("(),")


def compact(text: str, *, whole: bool = True) -> str:
    """``text`` without its comments, each run of whitespace one space.

    The comments are for people reading this module; the server gets the
    statement without them. psycopg parses a statement's placeholders once and
    caches the result only for statements of at most 4,096 characters
    (``psycopg._queries.MAX_CACHED_STATEMENT_LENGTH``): the read statements,
    over 5,000 with their comments, were parsed again at every call. Quoted
    literals are kept as written; identifiers are quoted after this, by
    :func:`render`.
    """
    if "$" in text:  # a dollar-quoted body: left exactly as written
        return text

    def one(m: re.Match[str]) -> str:
        if m.group()[0] in "'\"":
            return m.group()
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        return "" if before in _TIGHT or after in _TIGHT else " "

    out = _TOKEN.sub(one, text)
    # a fragment keeps one space at either end: it is put beside other text
    return out.strip() if whole else out


def render(template: str, schema: str, **parts: str) -> str:
    """Fill the schema (and fixed ``parts``) into a template, as a query string.

    Identifiers are quoted by psycopg; no connection is needed, so a saver
    renders its statements in its constructor without I/O. The statement is
    sent :func:`compact`.
    """
    fragments: dict[str, Any] = {
        "s": sql.Identifier(schema),
        "layout": sql.Identifier(LAYOUT_TABLE),
    }
    fragments.update({k: sql.SQL(compact(v, whole=False)) for k, v in parts.items()})
    return sql.SQL(compact(template)).format(**fragments).as_string(None)
