"""Benchmark: what writing the notification outbox with its fact costs.

Two writes gain an outbox event: ``put_writes`` of an approval's interrupt (the
wait index entry, event ``requested``) and ``record_decision`` (event
``decided``). Each is timed with the event and without it, in one process on
one storage area, interleaved round by round (``--rounds``, ``--calls`` per
mode per round), so machine load hits both modes alike; medians of per-call
latency and their ratio.

Without the event: on PostgreSQL the step-11 triggers are disabled for the
round (``ALTER TABLE ... DISABLE TRIGGER``); on Redis the saver's event
builders are swapped for ones that return no event (the scripts then skip the
outbox write and its shard entry).

Usage::

    python benchmarks/bench_notification_outbox.py --backend postgres
    python benchmarks/bench_notification_outbox.py --backend redis --rounds 7
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langgraph.types import Interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._parts import part_of

PG_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def marked_interrupt() -> Interrupt:
    deadline = datetime.now(timezone.utc) + timedelta(hours=1)
    value = {
        WAIT_KEY: wait_marker("approval", deadline, ["ops"]),
        "approval": {"request": {"action": "refund", "amount": 7}},
    }
    return Interrupt(value=value, id=uuid.uuid4().hex)


def decision(key: str) -> dict[str, Any]:
    return {
        "decision_id": uuid.uuid4().hex,
        "type": "decision",
        "approval_id": key,
        "approved": True,
        "by": "alice",
        "at": datetime.now(timezone.utc).isoformat(),
        "timed_out": False,
    }


def put_wait(saver: Any) -> None:
    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": "c1"}}
    saver.put_writes(config, [("__interrupt__", [marked_interrupt()])], "task-1")


def record(saver: Any) -> None:
    key = uuid.uuid4().hex
    part_of(saver, "decisions").record_decision(
        thread_id=uuid.uuid4().hex, key=key, decision=decision(key)
    )


@contextlib.contextmanager
def pg_area() -> Iterator[tuple[Any, Callable[[bool], None]]]:
    import psycopg
    from psycopg import sql

    from langgraph_durable.checkpointers.postgres import PostgresSaver

    schema = f"bench_outbox_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            with PostgresSaver.from_conn_string(PG_URL, schema=schema) as saver:
                saver.setup()

                def events(on: bool) -> None:
                    verb = sql.SQL("ENABLE" if on else "DISABLE")
                    for table, trigger in (
                        ("durable_waits", "durable_outbox_wait"),
                        ("durable_decisions", "durable_outbox_decision"),
                    ):
                        admin.execute(
                            sql.SQL("ALTER TABLE {} {} TRIGGER {}").format(
                                sql.Identifier(schema, table), verb, sql.Identifier(trigger)
                            )
                        )

                yield saver, events
        finally:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@contextlib.contextmanager
def redis_area() -> Iterator[tuple[Any, Callable[[bool], None]]]:
    import redis

    from langgraph_durable.checkpointers.redis import RedisSaver, _approvals, _core, _outbox_events

    prefix = f"bench_outbox_{uuid.uuid4().hex[:8]}"
    with RedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
        saver.setup()

        def events(on: bool) -> None:
            _core.wait_event = _outbox_events.wait_event if on else (lambda *a: None)  # type: ignore[assignment]
            _approvals.decision_event = (  # type: ignore[assignment]
                _outbox_events.decision_event if on else (lambda *a: None)
            )

        try:
            yield saver, events
        finally:
            events(True)
            client = redis.Redis.from_url(REDIS_URL)
            for pattern in (f"{prefix}:*", f"{{{prefix}:*"):
                for key in client.scan_iter(match=pattern, count=1000):
                    client.delete(key)


def timed(fn: Callable[[Any], None], saver: Any, calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(saver)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("postgres", "redis"), default="postgres")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    area = pg_area if args.backend == "postgres" else redis_area
    with area() as (saver, events):
        for fn in (put_wait, record):  # warm up both paths and both modes
            for on in (True, False):
                events(on)
                timed(fn, saver, 20)
        samples: dict[tuple[str, bool], list[float]] = {}
        for _ in range(args.rounds):
            for fn in (put_wait, record):
                for on in (True, False):
                    events(on)
                    samples.setdefault((fn.__name__, on), []).extend(timed(fn, saver, args.calls))
        events(True)
    print(f"backend={args.backend} rounds={args.rounds} calls/mode/round={args.calls}")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    for name in ("put_wait", "record"):
        with_ms = statistics.median(samples[(name, True)]) * 1000
        without_ms = statistics.median(samples[(name, False)]) * 1000
        print(
            f"{name:9s} with event {with_ms:7.3f} ms  without {without_ms:7.3f} ms  "
            f"ratio {with_ms / without_ms:5.2f}"
        )


if __name__ == "__main__":
    main()
