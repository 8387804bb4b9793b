"""Kill hooks and forked workers for the crash-loop tests.

A worker is a forked child (a real, separate process with its own
connections) that opens its own saver, arms a kill hook and drives the thread
towards its end. The hook SIGKILLs the process at the Nth call of one saver
operation, ``delay`` seconds after the call starts (0: before it is sent),
so kills land before, inside and just after the database round trip.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import sys
import threading
import traceback
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tests import _durability as d

HOOKED = ("put", "put_writes", "record_decision")


@dataclass(frozen=True)
class KillAt:
    """Kill the process at the ``nth`` call of ``operation``, ``delay`` s after it starts."""

    operation: str
    nth: int
    delay: float


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def arm(saver: Any, kill: KillAt | None, counts: Counter[str] | None = None) -> None:
    """Wrap the saver's hooked operations with a counter and the kill hook."""
    hooked_calls: dict[str, int] = {}
    for name in HOOKED:
        original = getattr(saver, name, None)
        if original is None:
            continue  # e.g. record_decision on a saver without a decision store

        def hooked(*args: Any, __name: str = name, __orig: Any = original, **kw: Any) -> Any:
            if counts is not None:
                counts[__name] += 1
            if kill is not None and kill.operation == __name:
                seen = hooked_calls[__name] = hooked_calls.get(__name, 0) + 1
                if seen == kill.nth:
                    if kill.delay <= 0:
                        _die()
                    timer = threading.Timer(kill.delay, _die)
                    timer.daemon = True
                    timer.start()
            return __orig(*args, **kw)

        setattr(saver, name, functools.wraps(original)(hooked))


def _child(backend: str, url: str, area: str, thread_id: str, kill: KillAt | None) -> None:
    try:
        with d.open_saver(backend, url, area, pool_size=2) as saver:
            arm(saver, kill)
            graph = d.pipeline_graph(saver)
            d.drive_to_end(graph, saver, thread_id)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


def run_worker(backend: str, url: str, area: str, thread_id: str, kill: KillAt | None) -> int:
    """Run one worker process to its end or its kill; return its exit code."""
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_child, args=(backend, url, area, thread_id, kill))
    proc.start()
    proc.join(120)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError(f"worker for {thread_id} hung (killed at {kill})")
    assert proc.exitcode is not None
    return proc.exitcode


def reference_run(saver: Any, thread_id: str) -> tuple[dict[str, Any], Counter[str]]:
    """An uninterrupted run in this process: its final values and call counts."""
    counts: Counter[str] = Counter()
    arm(saver, None, counts)
    graph = d.pipeline_graph(saver)
    d.drive_to_end(graph, saver, thread_id)
    return d.final_values(graph, thread_id), counts
