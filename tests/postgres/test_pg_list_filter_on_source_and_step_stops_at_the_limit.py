"""``list(None, filter=..., limit=n)`` on ``source`` / ``step`` reads an index in order and stops.

Across threads, a filter of only the keys LangGraph writes on every checkpoint
(``source``, ``step``) is answered by the indexes of layout step 15, newest
first: the scan reads ``n`` index entries, not every match, and the listing
returns what the containment filter returns. A schema set up before step 15
gets the indexes from ``setup()``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from psycopg import sql

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.postgres._listing import ListPages

THREADS = 12
STEPS = 4  # per thread: input at step -1, loop at 0..STEPS-2
INDEXES = ("checkpoints_metadata_source_idx", "checkpoints_metadata_step_idx")


def _fill(saver: PostgresSaver) -> None:
    for t in range(THREADS):
        config: Any = {"configurable": {"thread_id": f"t{t}", "checkpoint_ns": ""}}
        for step in range(-1, STEPS - 1):
            source = "input" if step < 0 else "loop"
            checkpoint = {**empty_checkpoint(), "id": str(uuid6())}
            metadata = {"source": source, "step": step, "user": f"u{t % 3}"}
            config = saver.put(config, checkpoint, metadata, {})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def area(pg_server_url: str) -> Iterator[tuple[str, str]]:
    """One schema for the module's read-only tests, filled once."""
    url, schema = pg_server_url, f"t_{uuid.uuid4().hex[:12]}"
    try:
        yield url, schema
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(scope="module")
def saver(area: tuple[str, str]) -> Iterator[PostgresSaver]:
    url, schema = area
    with PostgresSaver.from_conn_string(url, schema=schema) as s:
        s.setup()
        _fill(s)
        yield s


def _plan(url: str, saver: PostgresSaver, where: dict[str, Any], limit: int) -> dict[str, Any]:
    """The scan of the checkpoints table in the plan the listing's statement runs."""
    stmt = ListPages(saver.core, None, where, None, limit).next_statement()
    assert stmt is not None
    with psycopg.connect(url) as conn:
        # a table this small is cheaper to read whole; the question is whether the
        # index can answer in order, which the planner then shows
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")
        row = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + stmt.query, stmt.params).fetchone()
    assert row is not None
    scans = [n for n in _nodes(row[0][0]["Plan"]) if n.get("Relation Name") == "checkpoints"]
    assert len(scans) == 1, scans
    return scans[0]


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _expected(saver: PostgresSaver, where: dict[str, Any]) -> list[str]:
    every = list(saver.list(None))
    assert len(every) == THREADS * STEPS
    return [
        t.config["configurable"]["checkpoint_id"]
        for t in every
        if all(t.metadata.get(k) == v for k, v in where.items())
    ]


def _ids(saver: PostgresSaver, where: dict[str, Any], limit: int | None) -> list[str]:
    return [
        t.config["configurable"]["checkpoint_id"]
        for t in saver.list(None, filter=where, limit=limit)
    ]


@pytest.mark.parametrize(
    ("where", "index"),
    [
        ({"step": 1}, "checkpoints_metadata_step_idx"),
        ({"source": "loop", "step": 0}, None),
        ({"source": "input"}, "checkpoints_metadata_source_idx"),
    ],
)
def test_the_scan_reads_the_newest_matches_only(
    saver: PostgresSaver, area: tuple[str, str], where: dict[str, Any], index: str | None
) -> None:
    url, _ = area
    assert len(_expected(saver, where)) == THREADS > 5
    scan = _plan(url, saver, where, 5)
    assert scan["Node Type"] == "Index Scan" and scan["Scan Direction"] == "Backward", scan
    assert scan["Index Name"] == index if index else scan["Index Name"] in INDEXES, scan
    assert scan["Actual Rows"] == 5, scan  # stopped at the limit: 12 match


@pytest.mark.parametrize(
    "where",
    [
        {"step": 1},
        {"step": 1.0},  # the number jsonb compares, as containment does
        {"source": "loop", "step": 0},
        {"source": "input"},
        {"source": "loop"},
        {"source": "nowhere"},
        {"step": None},
    ],
)
@pytest.mark.parametrize("limit", [1, 5, None])
def test_the_listing_returns_what_the_filter_matches_newest_first(
    saver: PostgresSaver, where: dict[str, Any], limit: int | None
) -> None:
    expected = _expected(saver, where)
    assert _ids(saver, where, limit) == expected[:limit]


def test_other_filters_still_use_containment(saver: PostgresSaver) -> None:
    # a key of the application's beside them, and a value that is not a scalar
    assert _ids(saver, {"source": "loop", "user": "u1"}, None) == _expected(
        saver, {"source": "loop", "user": "u1"}
    )
    assert _ids(saver, {"step": [1]}, None) == []
    one = {"configurable": {"thread_id": "t3", "checkpoint_ns": ""}}
    within = [t.metadata["step"] for t in saver.list(one, filter={"source": "loop"})]
    assert within == list(range(STEPS - 2, -1, -1))


def test_setup_adds_the_indexes_to_a_schema_at_step_14(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        _fill(saver)
        # back to the layout of step 14, checkpoints and all
        with psycopg.connect(url, autocommit=True) as conn:
            for name in INDEXES:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, name)))
            conn.execute(
                sql.SQL("DELETE FROM {} WHERE version = 15").format(
                    sql.Identifier(schema, "langgraph_durable_layout")
                )
            )
        saver.setup()
        with psycopg.connect(url) as conn:
            found = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s"
                " AND indexname = ANY(%s) ORDER BY indexname",
                (schema, list(INDEXES)),
            ).fetchall()
        assert [r[0] for r in found] == list(INDEXES)
        scan = _plan(url, saver, {"step": 2}, 3)
        assert (scan["Index Name"], scan["Actual Rows"]) == ("checkpoints_metadata_step_idx", 3)
        assert _ids(saver, {"step": 2}, 3) == _expected(saver, {"step": 2})[:3]
