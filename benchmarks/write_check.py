"""What the write-time readability check adds to encoding a channel value.

Every value a saver stores goes through ``dumps_exact``, which since the check
also lists the types a read would refuse (``checkpointers/_readable.py``). This
times ``dumps_exact`` with the check and without it (the check swapped for a
no-op in this process), alternating the two in rounds so machine load falls on
both alike, for the values a put encodes:

* ``history``: the message list of ``benchmarks/growth.py`` (``--messages``
  ``AIMessage`` s of 1 KiB each, with ids) as a growing thread re-encodes it
  on every step;
* ``arabic``: the same with Arabic text (its UTF-8 bytes look like msgpack
  ext headers, so the check decodes the bytes instead of skipping them);
* ``plain``: a dict of strings and numbers (no object: skipped by a byte scan);
* ``typed``: 200 datetimes and UUIDs (safe objects, each checked).

That is the check of a whole value (a thread's first put, or ``deltas=False``).
``--growth``: the threads of ``benchmarks/growth.py`` (``--steps`` supersteps
of one growing message list, our Postgres and Redis savers) are run with the
time spent inside the check added up: its share of the graph run, where a put
checks only the items a growing list appends to the version it put before.

    python benchmarks/write_check.py --messages 300 --rounds 15
    python benchmarks/write_check.py --growth --steps 300 --rounds 3
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage

from langgraph_durable.checkpointers import _serde, default_serde

sys.path.insert(0, str(Path(__file__).resolve().parent))
import growth


def _values(messages: int) -> dict[str, Any]:
    def text(i: int) -> str:
        return base64.b64encode(os.urandom(768)).decode()

    arabic = "مرحبا بالعالم " * 70
    return {
        "history": [AIMessage(content=text(i), id=f"run-{uuid.uuid4()}") for i in range(messages)],
        "arabic": [AIMessage(content=arabic, id=f"run-{uuid.uuid4()}") for _ in range(messages)],
        "plain": {f"k{i}": {"n": i, "s": "x" * 100, "f": i / 3} for i in range(messages)},
        "typed": [{"at": datetime.now(timezone.utc), "id": uuid.uuid4()} for _ in range(100)],
    }


def _time(fn: Callable[[], Any], repeat: int) -> float:
    best = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best.append(time.perf_counter() - t0)
    return statistics.median(best)


def _growth_share(steps: int, rounds: int) -> None:
    """The check's share of each growth run (time inside it / the graph run's time)."""
    real = _serde.unreadable_types
    spent = [0.0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0

    _serde.unreadable_types = timed  # type: ignore[assignment]
    for _ in range(rounds):
        for saver in ("ours-pg", "ours-redis"):
            spent[0] = 0.0
            (result,) = growth.run_all([saver], steps, 3, False)
            run_s = result["run_s"]
            print(
                f"{saver:10} run {run_s:.3f} s, check {spent[0] * 1000:.1f} ms "
                f"({spent[0] / run_s:.1%})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--growth", action="store_true")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    if args.growth:
        _growth_share(args.steps, args.rounds)
        return
    serde = default_serde()
    check = _serde.unreadable_types
    values = _values(args.messages)

    def encode(value: Any) -> Callable[[], Any]:
        return lambda: _serde.dumps_exact(serde, value, field="channel value", channel="c")

    print(f"{'value':10} {'without (ms)':>13} {'with (ms)':>10} {'ratio':>7}")
    for name, value in values.items():
        without: list[float] = []
        with_: list[float] = []
        encode(value)()  # warm the check's cache, as a thread's second put finds it
        for _ in range(args.rounds):
            _serde.unreadable_types = lambda *a, **k: ()  # type: ignore[assignment]
            without.append(_time(encode(value), args.repeat))
            _serde.unreadable_types = check
            with_.append(_time(encode(value), args.repeat))
        a, b = statistics.median(without) * 1000, statistics.median(with_) * 1000
        print(f"{name:10} {a:13.3f} {b:10.3f} {b / a:7.2f}x")


if __name__ == "__main__":
    main()
