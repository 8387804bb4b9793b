"""The rollback SQL in docs/guides/adopting.md removes everything our setup() adds.

A database adopted in place (the official saver's tables, then our ``setup()``)
and then rolled back with the documented statements holds exactly what the
official saver's own ``setup()`` makes: no table, column, index, function,
trigger or sequence of ours is left behind, and the official saver writes and
reads a thread there afterwards (a trigger of ours left on its table would fail
its writes once the table it writes to is dropped).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver as OfficialSaver

from langgraph_durable.checkpointers.postgres import PostgresSaver

DOC = Path(__file__).parents[2] / "docs" / "guides" / "adopting.md"

# every object of a schema, by kind (constraints follow their tables and indexes)
CATALOG = """
SELECT 'relation ' || c.relkind::text, c.relname FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s
UNION ALL SELECT 'column', c.relname || '.' || a.attname FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = %(s)s AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL SELECT 'function', p.proname FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %(s)s
UNION ALL SELECT 'trigger', t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s AND NOT t.tgisinternal
UNION ALL SELECT 'type', t.typname FROM pg_type t
  JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = %(s)s AND t.typtype IN ('e', 'c', 'd') AND t.typrelid = 0
"""


def _rollback_sql() -> str:
    text = DOC.read_text()
    after = text[text.index("To remove our additions after a rollback") :]
    found = re.search(r"```sql\n(.*?)```", after, re.S)
    assert found is not None, "the rollback SQL block is missing from adopting.md"
    return found.group(1)


def _catalog(conn: psycopg.Connection[Any], schema: str) -> set[tuple[str, str]]:
    return set(conn.execute(CATALOG, {"s": schema}).fetchall())


def _official(url: str, schema: str) -> Any:
    return OfficialSaver.from_conn_string(f"{url}?options=-csearch_path%3D{schema}")


def _write_and_read(saver: Any, thread_id: str) -> None:
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": ["hello"]}
    cp["channel_versions"] = {"messages": saver.get_next_version(None, None)}
    stored = saver.put(config, cp, {"source": "input", "step": -1}, cp["channel_versions"])
    got = saver.get_tuple(stored)
    assert got is not None
    assert got.checkpoint["channel_values"] == {"messages": ["hello"]}


def test_the_documented_rollback_leaves_the_official_layout(pg_database: str) -> None:
    url = pg_database
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA adopted")
        conn.execute("CREATE SCHEMA official")
    with _official(url, "official") as official:
        official.setup()
    with _official(url, "adopted") as official:
        official.setup()
    with PostgresSaver.from_conn_string(url, schema="adopted", deltas=False) as ours:
        ours.setup()
        _write_and_read(ours, "ours")
    with psycopg.connect(url, autocommit=True) as conn:
        added = _catalog(conn, "adopted") - _catalog(conn, "official")
        assert ("relation r", "durable_waits") in added  # our setup did add its layout
        conn.execute("SET search_path = adopted")
        conn.execute(_rollback_sql())
        assert _catalog(conn, "adopted") == _catalog(conn, "official")
    with _official(url, "adopted") as official:
        _write_and_read(official, "official-after-rollback")
        assert official.get_tuple({"configurable": {"thread_id": "ours"}}) is not None
