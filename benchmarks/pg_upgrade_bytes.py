"""Stored bytes of a Postgres thread before and after ``upgrade_all``.

A 100-step thread appends a message per step (stored as deltas that name the
pending writes); ``upgrade_all(all_history=True)`` then renames the node (the
deltas are re-pointed) or upgrades the message values (the deltas naming the
replaced writes are rewritten whole, beside the upgraded values stored whole).
Prints the ratio of ``checkpoint_blobs`` + ``checkpoint_writes`` bytes after/before.

    python benchmarks/pg_upgrade_bytes.py [postgres url]
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.migrations import upgrade_all
from tests.postgres.test_pg_upgrade_keeps_what_deltas_refer_to import (
    CONFIG,
    _graph,
    _migrations,
)

URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def stored_bytes(schema: str) -> int:
    with psycopg.connect(URL) as conn:
        row = conn.execute(
            sql.SQL(
                "SELECT (SELECT coalesce(sum(length(blob)), 0) FROM {s}.checkpoint_blobs)"
                " + (SELECT coalesce(sum(length(blob)), 0) FROM {s}.checkpoint_writes)"
            ).format(s=sql.Identifier(schema))
        ).fetchone()
    assert row is not None
    return int(row[0])


def main() -> None:
    global URL
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", nargs="?", default=URL, help="a PostgreSQL URL (default: %(default)s)")
    URL = ap.parse_args().url
    for kind in ("rename", "value"):
        schema = f"bench_upgrade_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(URL, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            with PostgresSaver.from_conn_string(URL, schema=schema) as s:
                s.setup()
                _graph(s).invoke({"target": 100}, CONFIG)
            before = stored_bytes(schema)
            m = _migrations(kind)
            with PostgresSaver.from_conn_string(URL, schema=schema, migrations=m) as s:
                upgrade_all(s, m, all_history=True)
            print(
                f"{kind}: stored bytes after/before upgrade_all = "
                f"{stored_bytes(schema) / before:.2f}x"
            )
        finally:
            with psycopg.connect(URL, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    main()
