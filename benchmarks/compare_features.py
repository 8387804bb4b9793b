"""Check, by running them, which features each saver has; print a Markdown table.

    python benchmarks/compare_features.py [--pg URL] [--redis URL]

Every cell is the outcome of code run here against real servers (the local
defaults, else embedded ones): "yes", or "no" with what happened. The README's
comparison table summarizes this script's output.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests._servers import postgres_url, redis_url

Saver = BaseCheckpointSaver[Any]
Opener = Callable[[], AbstractContextManager[Saver]]


@contextmanager
def _database(url: str) -> Iterator[str]:
    name = f"cmp_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(urlsplit(url)._replace(path="/" + name))
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def openers(pg: str, rd: str) -> dict[str, Opener]:
    prefix = f"cmp{uuid.uuid4().hex[:8]}"

    @contextmanager
    def ours_pg() -> Iterator[Saver]:
        from langgraph_durable.checkpointers.postgres import PostgresSaver

        with _database(pg) as db, PostgresSaver.from_conn_string(db) as s:
            s.setup()
            yield s

    @contextmanager
    def official_pg() -> Iterator[Saver]:
        from langgraph.checkpoint.postgres import PostgresSaver

        with _database(pg) as db, PostgresSaver.from_conn_string(db) as s:
            s.setup()
            yield s

    @contextmanager
    def ours_redis() -> Iterator[Saver]:
        from langgraph_durable.checkpointers.redis import RedisSaver

        with RedisSaver.from_conn_string(rd, prefix=prefix) as s:
            s.setup()
            yield s

    @contextmanager
    def official_redis() -> Iterator[Saver]:
        from langgraph.checkpoint.redis import RedisSaver

        with RedisSaver.from_conn_string(rd) as s:
            s.setup()
            yield s

    @contextmanager
    def plainredis() -> Iterator[Saver]:
        from langgraph_checkpoint_plainredis.saver import RedisSaver

        yield RedisSaver(url=rd, prefix=prefix + "p")

    return {
        "langgraph-durable (Postgres)": ours_pg,
        "langgraph-checkpoint-postgres": official_pg,
        "langgraph-durable (Redis)": ours_redis,
        "langgraph-checkpoint-redis": official_redis,
        "langgraph-checkpoint-plainredis": plainredis,
    }


def _put(
    s: Saver,
    thread: str,
    metadata: dict[str, Any] | None = None,
    values: dict[str, Any] | None = None,
) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = dict(values or {})
    cp["channel_versions"] = {k: 1 for k in cp["channel_values"]}
    md = {"source": "input", "step": -1, **(metadata or {})}
    return s.put(
        {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, cp, md, cp["channel_versions"]
    )  # type: ignore[arg-type]


def _get(s: Saver, thread: str) -> Any:
    return s.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})


def check_runs(s: Saver) -> str:
    t = f"t-{uuid.uuid4().hex[:6]}"
    _put(s, t, values={"x": 1})
    return "yes" if _get(s, t) is not None else "no: nothing read back"


def check_nul_metadata(s: Saver) -> str:
    t = f"t-{uuid.uuid4().hex[:6]}"
    _put(s, t, metadata={"note": "a\x00b"})
    got = _get(s, t).metadata.get("note")
    return "yes" if got == "a\x00b" else f"no: read back {got!r}"


def check_nul_value(s: Saver) -> str:
    t = f"t-{uuid.uuid4().hex[:6]}"
    _put(s, t, values={"x": "a\x00b"})
    got = _get(s, t).checkpoint["channel_values"].get("x")
    return "yes" if got == "a\x00b" else f"no: read back {got!r}"


def check_pattern_ids(s: Saver) -> str:
    base = f"p{uuid.uuid4().hex[:6]}"
    for t in (base, base + "b", base + "*"):
        _put(s, t, values={"x": t})
    s.delete_thread(base + "*")
    left = [t for t in (base, base + "b") if _get(s, t) is not None]
    return "yes" if len(left) == 2 else f"no: delete_thread('{base}*') also deleted {2 - len(left)}"


def check_nul_thread_id(s: Saver) -> str:
    try:
        _put(s, "bad\x00id", values={"x": 1})
    except ValueError as exc:
        return "yes" if "thread_id" in str(exc) else f"no: {type(exc).__name__}"
    except Exception as exc:
        return f"no: {type(exc).__module__.split('.')[0]}.{type(exc).__name__}"
    return "no: stored silently" if _get(s, "bad\x00id") is None else "stored"


def check_schema_version(s: Saver) -> str:
    t = f"t-{uuid.uuid4().hex[:6]}"
    _put(s, t)
    # stored beside the metadata (which reads back as written), read apart
    reader = getattr(s, "schema_version", None)
    if not callable(reader):
        return "no"
    version = reader({"configurable": {"thread_id": t, "checkpoint_ns": ""}})
    return "yes" if isinstance(version, int) else "no"


def check_wait_index(s: Saver) -> str:
    from langgraph_durable.checkpointers import WaitIndex, feature

    return "yes" if feature(s, WaitIndex) is not None else "no"


CHECKS: dict[str, Callable[[Saver], str]] = {
    "set up and round-trip a checkpoint on this machine's server": check_runs,
    "metadata value with `\\u0000` reads back exactly": check_nul_metadata,
    "channel value with `\\u0000` reads back exactly": check_nul_value,
    "`delete_thread('x*')` deletes only thread `x*`": check_pattern_ids,
    "thread id with `\\u0000`: error naming `thread_id`": check_nul_thread_id,
    "schema version tagged on every checkpoint": check_schema_version,
    "indexed pending interrupts with deadlines": check_wait_index,
}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", default=None)
    parser.add_argument("--redis", default=None)
    args = parser.parse_args()
    savers = openers(args.pg or postgres_url(), args.redis or redis_url())
    rows: dict[str, dict[str, str]] = {c: {} for c in CHECKS}
    for name, open_saver in savers.items():
        try:
            with open_saver() as s:
                for check, fn in CHECKS.items():
                    try:
                        rows[check][name] = fn(s)
                    except Exception as exc:
                        rows[check][name] = f"no: {type(exc).__name__}: {exc}"
        except Exception as exc:
            first = next(iter(CHECKS))
            reason = str(exc).split("\n")[0]
            cause = exc.__cause__ or exc.__context__
            if cause is not None:
                reason = str(cause).split("\n")[0]
            rows[first][name] = f"no: setup failed: {reason}"
            for check in list(CHECKS)[1:]:
                rows[check][name] = "n/a (does not run here)"
    names = list(savers)
    print("| check | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for check, cells in rows.items():
        print(f"| {check} | " + " | ".join(_short(cells[n]) for n in names) + " |")


if __name__ == "__main__":
    main()
