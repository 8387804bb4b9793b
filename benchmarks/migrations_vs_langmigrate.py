"""Schema migrations: langgraph-durable vs LangMigrate 1.3, on the same data in one run.

    python benchmarks/migrations_vs_langmigrate.py [--url postgresql://...] [--threads 5000]

Writes ``threads`` x 4 checkpoints with the official langgraph-checkpoint-postgres
saver (one real paused thread, cloned in SQL), copies them into one schema per
contender, and measures on identical rows:

* a plain ``list()`` of every checkpoint through the official saver (reference);
* LangMigrate's batch runner (``run_batch_upgrade``, every checkpoint: it has no
  latest-only mode);
* our ``upgrade_all``, latest-only and ``all_history=True``;
* ``get_tuple`` of the latest checkpoint of each thread: our saver without
  ``migrations=`` (the reference), with ``migrations=`` on a checkpoint already at
  the code's version, and with ``migrations=`` upgrading in memory; and for
  context LangMigrate's interceptor with and without write-back.

A temporary database is created and dropped. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import operator
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.migrations import StateMigrations, upgrade_all

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


class State(TypedDict, total=False):
    price: int
    log: Annotated[list[str], operator.add]


def build(checkpointer: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def intake(s: State) -> dict[str, Any]:
        return {"log": ["intake"]}

    def plan(s: State) -> dict[str, Any]:
        return {"price": s["price"] + 1, "log": ["plan"]}

    def review(s: State) -> dict[str, Any]:
        return {"log": [str(interrupt({"price": s["price"]}))]}

    g = StateGraph(State)
    for name, fn in (("intake", intake), ("plan", plan), ("review", review)):
        g.add_node(name, fn)
    g.add_edge(START, "intake")
    g.add_edge("intake", "plan")
    g.add_edge("plan", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=checkpointer)


def ours() -> StateMigrations:
    m = StateMigrations(version=1)

    @m.upgrade(from_version=0)
    def price_to_money(values: dict[str, Any]) -> dict[str, Any]:
        if "price" in values:
            values["price"] = {"amount": values["price"], "currency": "USD"}
        return values

    return m


def langmigrate_engine() -> Any:
    from langmigrate import MigrationEngine, MigrationRegistry, migration

    @migration("a1", down_revision=None, slug="price_to_money")
    def price_to_money(state: Any) -> Any:
        return state.coerce_field(
            "price",
            lambda p: {"amount": p, "currency": "USD"},
            skip_if=lambda p: isinstance(p, dict),
        )

    return MigrationEngine(MigrationRegistry.from_migrations([price_to_money]))


def with_db(url: str, db: str, schema: str | None = None) -> str:
    p = urlsplit(url)
    query = f"options=-csearch_path%3D{schema}" if schema else ""
    return urlunsplit((p.scheme, p.netloc, "/" + db, query, ""))


def seed(url: str, threads: int) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as Official

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA seed")
    with psycopg.connect(
        url, autocommit=True, prepare_threshold=0, options="-c search_path=seed"
    ) as conn:
        saver = Official(conn)
        saver.setup()
        build(saver).invoke({"price": 10, "log": []}, {"configurable": {"thread_id": "t0"}})
        for table, cols in (
            (
                "checkpoints",
                "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
            ),
            ("checkpoint_blobs", "checkpoint_ns, channel, version, type, blob"),
            (
                "checkpoint_writes",
                "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
            ),
        ):
            conn.execute(
                sql.SQL(
                    "INSERT INTO {t} (thread_id, {c}) SELECT 't' || g, {c} FROM {t}, "
                    "generate_series(1, %s) AS g WHERE thread_id = 't0'"
                ).format(t=sql.Identifier(table), c=sql.SQL(cols)),
                (threads - 1,),
            )
        conn.execute("VACUUM ANALYZE")


def copy_schema(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        for t in TABLES:
            conn.execute(
                sql.SQL(
                    "CREATE TABLE {n}.{t} (LIKE seed.{t} INCLUDING ALL); "
                    "INSERT INTO {n}.{t} SELECT * FROM seed.{t}"
                ).format(n=sql.Identifier(name), t=sql.Identifier(t))
            )
        conn.execute(sql.SQL("ANALYZE"))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def read_rounds(
    readers: dict[str, Callable[[str], Any]], threads: list[str], rounds: int
) -> dict[str, tuple[float, float]]:
    """Per reader: (wall time, client CPU time) to read every thread once, best round.

    The readers take turns on every single read (order rotating), so a busy,
    shared machine slows them alike; the best of ``rounds`` rounds is kept. The
    client CPU time is where migrations add work (the server's is the same).
    """
    names = list(readers)
    best: dict[str, tuple[float, float]] = {}
    for r in range(rounds):
        wall = dict.fromkeys(names, 0.0)
        cpu = dict.fromkeys(names, 0.0)
        for i, tid in enumerate(threads):
            k = (i + r) % len(names)
            for name in names[k:] + names[:k]:
                t, c = time.perf_counter(), time.process_time()
                readers[name](tid)
                wall[name] += time.perf_counter() - t
                cpu[name] += time.process_time() - c
        for name in names:
            prev = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(prev[0], wall[name]), min(prev[1], cpu[name]))
    return best


def best_of(fn: Callable[[], Any], rounds: int) -> float:
    """Best wall time of ``rounds`` calls of ``fn``."""
    return min(timed(fn)[0] for _ in range(rounds))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--threads", type=int, default=5000)
    ap.add_argument("--read-threads", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--reads-only", action="store_true", help="skip the batch upgrades")
    args = ap.parse_args()
    db = f"bench_mig_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    base = with_db(args.url, db)
    results: list[tuple[str, float, str]] = []
    try:
        seed(base, args.threads)
        for name in ("lm", "ours_latest", "ours_all", "reads_v0", "reads_v1", "lm_reads"):
            copy_schema(base, name)
        n = args.threads * 4
        m = ours()

        from langgraph.checkpoint.postgres import PostgresSaver as Official

        if not args.reads_only:
            # -- reference: list() every checkpoint with the official saver
            with psycopg.connect(
                with_db(args.url, db, "lm"), autocommit=True, prepare_threshold=0
            ) as conn:
                t_list, rows = timed(lambda: sum(1 for _ in Official(conn).list(None)))
            assert rows == n
            results.append((f"official saver: list() of all {n} checkpoints", t_list, "reference"))

            # -- LangMigrate batch upgrade (all checkpoints)
            from langmigrate import run_batch_upgrade
            from langmigrate.adapters.postgres import PostgresAdapter

            adapter = PostgresAdapter.from_conn_string(with_db(args.url, db, "lm"))
            adapter.setup()
            t_lm, res = timed(lambda: run_batch_upgrade(adapter, langmigrate_engine()))
            assert res.migrated == n and res.failed == 0, res
            results.append(
                (
                    f"LangMigrate run_batch_upgrade: {n} checkpoints",
                    t_lm,
                    f"{t_lm / t_list:.2f}x list()",
                )
            )

            # -- ours
            for schema, all_history, label in (
                ("ours_latest", False, f"ours upgrade_all latest-only: {args.threads} threads"),
                ("ours_all", True, f"ours upgrade_all --all-history: {n} checkpoints"),
            ):
                with PostgresSaver.from_conn_string(base, schema=schema, migrations=m) as saver:
                    saver.setup()
                    t, res = timed(lambda s=saver, a=all_history: upgrade_all(s, m, all_history=a))
                assert res.failed == 0 and res.upgraded == (n if all_history else args.threads), res
                results.append((label, t, f"{t / t_lm:.2f}x LangMigrate"))

        # -- reads
        with psycopg.connect(base, autocommit=True) as conn:
            for schema in ("reads_v0", "reads_v1"):
                with PostgresSaver.from_conn_string(base, schema=schema) as s:
                    s.setup()
            conn.execute(
                "UPDATE reads_v1.checkpoints SET schema_version = 1, "
                "metadata = jsonb_set(metadata, '{schema_version}', '1')"
            )
            # same physical state for both read schemas (no dead rows)
            conn.execute("VACUUM FULL ANALYZE reads_v1.checkpoints")
            conn.execute("VACUUM FULL ANALYZE reads_v0.checkpoints")
        sample = [f"t{i}" if i else "t0" for i in range(args.read_threads)]
        with (
            PostgresSaver.from_conn_string(base, schema="reads_v0") as plain,
            PostgresSaver.from_conn_string(base, schema="reads_v0", migrations=m) as upg,
            PostgresSaver.from_conn_string(base, schema="reads_v1", migrations=m) as cur,
        ):
            # the stored versions: reads_v0 behind the code (upgraded on read), reads_v1 current
            t1: Any = {"configurable": {"thread_id": "t1"}}
            assert upg.schema_version(t1) != 1 and cur.schema_version(t1) == 1

            def reader(s: Any) -> Callable[[str], Any]:
                return lambda tid: s.get_tuple({"configurable": {"thread_id": tid}})

            med = read_rounds(
                {"plain": reader(plain), "current": reader(cur), "upgrade": reader(upg)},
                sample,
                args.rounds,
            )
        # The hook alone, without I/O: what _finish_read adds to each read.
        with PostgresSaver.from_conn_string(base, schema="reads_v0") as raw_reader:
            raw = [raw_reader.get_tuple({"configurable": {"thread_id": tid}}) for tid in sample]
        hook_current = best_of(lambda: [cur.core._finish_read(t, 1) for t in raw], args.rounds)
        hook_upgrade = best_of(lambda: [upg.core._finish_read(t, 0) for t in raw], args.rounds)
        us = len(sample) / 1e6
        (pw, pc), (cw, cc), (uw, uc) = med["plain"], med["current"], med["upgrade"]
        results.append(
            (
                "ours get_tuple, no migrations= (reference)",
                pw,
                f"{pw / us:.0f} us/read wall, {pc / us:.0f} us/read client CPU",
            )
        )
        results.append(
            (
                "ours get_tuple, migrations= set, checkpoint already current",
                cw,
                f"{cw / pw:.3f}x wall, {cc / pc:.3f}x client CPU",
            )
        )
        results.append(
            (
                "ours get_tuple, migrations= set, upgraded in memory",
                uw,
                f"{uw / pw:.3f}x wall, {uc / pc:.3f}x client CPU",
            )
        )
        results.append(
            (
                "ours _finish_read alone, checkpoint current (per read)",
                hook_current / len(sample),
                f"{hook_current / len(sample) / (pw / len(sample)) * 100:.2f}% of a read",
            )
        )
        results.append(
            (
                "ours _finish_read alone, upgrade in memory (per read)",
                hook_upgrade / len(sample),
                f"{hook_upgrade / len(sample) / (pw / len(sample)) * 100:.2f}% of a read",
            )
        )

        from langmigrate import MigrationInterceptor

        lm_url = with_db(args.url, db, "lm_reads")
        with (
            psycopg.connect(lm_url, autocommit=True, prepare_threshold=0) as c1,
            psycopg.connect(lm_url, autocommit=True, prepare_threshold=0) as c2,
        ):
            official = Official(c1)
            lazy = MigrationInterceptor(Official(c2), langmigrate_engine(), write_back=False)
            lm_med = read_rounds(
                {
                    "official": (
                        lambda tid: official.get_tuple({"configurable": {"thread_id": tid}})
                    ),
                    "lazy": (lambda tid: lazy.get_tuple({"configurable": {"thread_id": tid}})),
                },
                sample,
                args.rounds,
            )
            healer = MigrationInterceptor(Official(c2), langmigrate_engine(), write_back=True)
            t_heal, _ = timed(
                lambda: [healer.get_tuple({"configurable": {"thread_id": tid}}) for tid in sample]
            )
        (ow, oc), (lw, lc) = lm_med["official"], lm_med["lazy"]
        results.append(
            (
                "LangMigrate interceptor, in memory (vs official get_tuple)",
                lw,
                f"{lw / ow:.3f}x wall, {lc / oc:.3f}x client CPU",
            )
        )
        results.append(
            ("LangMigrate interceptor, write-back (first read)", t_heal, f"{t_heal / ow:.3f}x wall")
        )
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db))
            )
    print(
        f"\n{args.threads} threads x 4 checkpoints; reads: {args.read_threads} threads, "
        f"best of {args.rounds} rounds\n"
    )
    print("| measurement | seconds | ratio |")
    print("|---|---:|---|")
    for label, secs, ratio in results:
        print(f"| {label} | {secs:.3f} | {ratio} |")


if __name__ == "__main__":
    main()
