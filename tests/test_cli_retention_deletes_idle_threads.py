"""``langgraph-durable retention`` and ``worker --retention`` delete idle threads only."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from langgraph_durable.checkpointers.postgres import PostgresSaver
from tests._retention_graphs import run as _run


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _seed(url: str) -> None:
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        for t in ("old-1", "old-2", "new"):
            _run(saver, t)
        _run(saver, "old-asking", "plain")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE durable_thread_activity SET active_at = now() - %s::interval"
            " WHERE thread_id LIKE 'old-%%'",
            (timedelta(days=40),),
        )


def _threads(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def test_dry_run_then_retention(pg_database: str) -> None:
    _seed(pg_database)
    dry = _cli("retention", "--url", pg_database, "--older-than", "30d", "--dry-run", "--list")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[:2] == ["old-1", "old-2"]
    assert "would delete 2 threads" in dry.stdout and "would keep 1 waiting" in dry.stdout
    assert _threads(pg_database) == ["new", "old-1", "old-2", "old-asking"]
    done = _cli("retention", "--url", pg_database, "--older-than", "30d")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deleted 2 threads")
    assert _threads(pg_database) == ["new", "old-asking"]


def test_keep_latest_from_the_command_line(pg_database: str) -> None:
    _seed(pg_database)
    done = _cli("retention", "--url", pg_database, "--older-than", "30d", "--keep-latest")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pruned 2 threads")
    with psycopg.connect(pg_database) as conn:
        (n,) = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'old-1'").fetchone()
    assert n == 1


def test_one_thread_is_counted_as_one(pg_database: str) -> None:
    with PostgresSaver.from_conn_string(pg_database) as saver:
        saver.setup()
        for t in ("old-1", "new"):
            _run(saver, t)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(
            "UPDATE durable_thread_activity SET active_at = now() - %s::interval"
            " WHERE thread_id = 'old-1'",
            (timedelta(days=40),),
        )
    args = ("retention", "--url", pg_database, "--older-than", "30d")
    dry = _cli(*args, "--dry-run", "--keep-latest")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would prune 1 thread ("), dry.stdout
    assert "; would keep 0 waiting, 0 held by a run; " in dry.stdout
    done = _cli(*args)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("deleted 1 thread (") and " checkpoints); kept 0 waiting" in line, line
    assert line.endswith("; 1 batch"), line
    assert _threads(pg_database) == ["new"]


def test_worker_applies_retention_each_pass(pg_database: str) -> None:
    _seed(pg_database)
    graph = "langgraph_durable.interrupts._demo:build_graph"
    out = _cli("worker", "--url", pg_database, "--graph", graph, "--once", "--retention", "30d")
    assert out.returncode == 0, out.stderr
    assert "deleted=2" in out.stdout
    assert _threads(pg_database) == ["new", "old-asking"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["retention", "--older-than", "soon"], "--older-than 'soon' is not a duration"),
        (["retention", "--older-than", "0d"], "must be longer than zero"),
        (["worker", "--graph", "x:y", "--once", "--retention-keep-latest"], "needs --retention"),
    ],
)
def test_bad_arguments_are_named(pg_database: str, args: list[str], said: str) -> None:
    _seed(pg_database)
    out = _cli(*args, "--url", pg_database)
    assert out.returncode != 0 and said in out.stderr, out.stderr
    assert len(_threads(pg_database)) == 4


def test_redis_is_told_to_use_ttl(redis_prefix: Any) -> None:
    url, prefix = redis_prefix
    out = _cli("retention", "--url", f"{url}?prefix={prefix}", "--older-than", "30d")
    assert out.returncode != 0 and "ttl=" in out.stderr, out.stderr
