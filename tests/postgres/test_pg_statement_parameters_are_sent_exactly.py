"""The savers' array parameters and compacted statements reach the server exactly.

The hot statements send their arrays in PostgreSQL's binary array format
(``postgres/_arrays.py``) and without their comments (``_sql.compact``): every
element comes back as sent (NULLs, empty arrays, non-ASCII text in a UTF-8 and
a LATIN1 database, bytes with NULs, negative ints), a connection with adapters
of its own still sends the same values, quoted text and identifiers holding
``--`` are kept, and the statements of every call a graph step makes are short
enough for psycopg to cache their parsing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import sql
from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH
from psycopg.adapt import AdaptersMap, PyFormat
from psycopg.types.array import ListBinaryDumper, ListDumper

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.postgres._arrays import ByteaArray, IntArray, TextArray
from langgraph_durable.checkpointers.postgres._sql import compact, render
from langgraph_durable.checkpointers.postgres._stmt import _Queries

SAMPLES = (
    (TextArray(["a", None, "é ü ß", "", "x" * 5000]), "text[]"),
    (TextArray(), "text[]"),
    (ByteaArray([b"\x00\x01\xff", None, b"", bytes(range(256))]), "bytea[]"),
    (ByteaArray(), "bytea[]"),
    (IntArray([0, -1, 2**31 - 1, -(2**31)]), "int[]"),
    (IntArray(), "int[]"),
)


def _round_trip(conn: psycopg.Connection) -> None:
    for value, cast in SAMPLES:
        (back,) = conn.execute(sql.SQL("SELECT %s::" + cast), [value]).fetchone()
        assert back == list(value), (cast, value)
    # the empty text[] the wait columns send casts to their types
    row = conn.execute(
        "SELECT %s::timestamptz[], %s::jsonb[]", [TextArray(), TextArray()]
    ).fetchone()
    assert row == ([], [])


def test_arrays_round_trip_on_a_utf8_database(pg_server_url: str) -> None:
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        _round_trip(conn)


@pytest.fixture
def latin1_database(pg_server_url: str) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE DATABASE {} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' "
                "TEMPLATE template0"
            ).format(sql.Identifier(name))
        )
    yield pg_server_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def test_arrays_round_trip_in_the_connections_encoding(latin1_database: str) -> None:
    with psycopg.connect(latin1_database, autocommit=True) as conn:
        conn.execute("SET client_encoding = 'LATIN1'")
        (back,) = conn.execute("SELECT %s::text[]", [TextArray(["é", None])]).fetchone()
        assert back == ["é", None]


def test_a_connection_with_its_own_adapters_sends_the_same_values(pg_server_url: str) -> None:
    # adapters where the wrappers have psycopg's own list dumpers, as on a
    # connection whose adapters were made before the library registered its own
    own = AdaptersMap(psycopg.postgres.adapters)
    for cls in (TextArray, ByteaArray, IntArray):
        own.register_dumper(cls, ListDumper)
        own.register_dumper(cls, ListBinaryDumper)
    with psycopg.connect(pg_server_url, autocommit=True, context=own) as conn:
        dumper = conn.adapters.get_dumper(TextArray, PyFormat.AUTO)
        assert "TextArray" not in dumper.__name__
        for value, cast in SAMPLES:
            if value:
                (back,) = conn.execute(sql.SQL("SELECT %s::" + cast), [value]).fetchone()
                assert back == list(value)


def test_a_saver_round_trips_values_through_the_arrays(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True) as conn:
        saver = PostgresSaver(conn, schema=schema)
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": ["é\x00", b"\x00bytes"], "n": 3}
        cp["channel_versions"] = {
            k: saver.get_next_version(None, None) for k in cp["channel_values"]
        }
        cfg = {"configurable": {"thread_id": "t-é", "checkpoint_ns": ""}}
        saved = saver.put(cfg, cp, {"source": "loop", "step": 1}, cp["channel_versions"])
        saver.put_writes(saved, [("messages", ["w\x00"]), ("__interrupt__", ["z"])], "task-1")
        got = saver.get_tuple(saved)
        assert got is not None
        assert got.checkpoint["channel_values"] == {"messages": ["é\x00", b"\x00bytes"], "n": 3}
        assert sorted((t, c, v) for t, c, v in got.pending_writes) == [
            ("task-1", "__interrupt__", ["z"]),
            ("task-1", "messages", ["w\x00"]),
        ]


def test_compaction_keeps_literals_and_identifiers() -> None:
    text = "SELECT '--not a comment',  'it''s  spaced' -- a comment\n  FROM   \"a--b\"  ( x ,  y )"
    assert compact(text) == "SELECT '--not a comment','it''s  spaced' FROM \"a--b\"(x,y)"
    # a schema holding -- is quoted after compaction, and kept
    assert '"we--ird"' in render("SELECT 1 FROM {s}.t -- c", "we--ird")
    # a fragment keeps the space that separates it from the text beside it
    assert render("LIMIT 1{lock}", "s", lock=" FOR UPDATE -- x\n") == "LIMIT 1 FOR UPDATE "


def test_the_statements_of_a_graph_step_are_parsed_once() -> None:
    q = _Queries("public")
    for name in ("get_latest", "get_by_id", "put", "put_writes_upsert", "put_writes_insert"):
        query = getattr(q, name)
        assert "--" not in query, name
        assert len(query) <= MAX_CACHED_STATEMENT_LENGTH, (name, len(query))
