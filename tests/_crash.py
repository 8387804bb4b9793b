"""Kill hooks and forked workers for the crash-loop tests.

A worker is a forked child (a real, separate process with its own
connections) that opens its own saver, arms a kill hook and drives the thread
towards its end. The hook SIGKILLs the process at the Nth call of one saver
operation, ``delay`` seconds after the call starts (0: before it is sent),
so kills land before, inside and just after the database round trip. The
saga workflow's activities and undos (``tests._crash_saga``) call the same
hook at ``<name>:enter`` / ``<name>:exit`` (``POINTS``), around their side
effect.
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

from tests import _crash_saga as s
from tests import _durability as d
from tests._parts import STORES

HOOKED = ("put", "put_writes", "record_decision", "put_activity")
# kill points inside the saga workflow's side effects and undos (tests._crash_saga)
POINTS = tuple(
    f"{what}:{where}"
    for what in ("reserve_api", "charge_api", "notify_api", "refund", "release")
    for where in ("enter", "exit")
)
WORKFLOWS = ("pipeline", "saga")


@dataclass(frozen=True)
class KillAt:
    """Kill the process at the ``nth`` call of ``operation``, ``delay`` s after it starts."""

    operation: str
    nth: int
    delay: float


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_hook(kill: KillAt | None, counts: Counter[str] | None) -> Any:
    """``hit(name)``: count a call of ``name``; SIGKILL (now or after the delay) at the Nth."""
    seen: Counter[str] = Counter()

    def hit(name: str) -> None:
        if counts is not None:
            counts[name] += 1
        if kill is not None and kill.operation == name:
            seen[name] += 1
            if seen[name] == kill.nth:
                if kill.delay <= 0:
                    _die()
                timer = threading.Timer(kill.delay, _die)
                timer.daemon = True
                timer.start()

    return hit


def arm(saver: Any, kill: KillAt | None, counts: Counter[str] | None = None) -> None:
    """Wrap the saver's hooked operations and the saga's effect points with the kill hook."""
    hit = _kill_hook(kill, counts)
    s.POINT[0] = hit
    for name in HOOKED:
        # the saver's own method, or its store's (record_decision: saver.decisions)
        owner = next(
            (
                part
                for part in (saver, *(getattr(saver, a, None) for a in STORES))
                if part is not None and hasattr(part, name)
            ),
            None,
        )
        if owner is None:
            continue  # e.g. record_decision on a saver without a decision store
        original = getattr(owner, name)

        def hooked(*args: Any, __name: str = name, __orig: Any = original, **kw: Any) -> Any:
            hit(__name)
            return __orig(*args, **kw)

        setattr(owner, name, functools.wraps(original)(hooked))


def graph_of(workflow: str, saver: Any) -> Any:
    """The compiled ``workflow`` (``pipeline`` or ``saga``) on ``saver``."""
    return d.pipeline_graph(saver) if workflow == "pipeline" else s.saga_graph(saver)


def drive(workflow: str, graph: Any, saver: Any, thread_id: str) -> None:
    """Take a thread of ``workflow`` from wherever it is to its end."""
    (d.drive_to_end if workflow == "pipeline" else s.drive_to_end)(graph, saver, thread_id)


def final_values(workflow: str, graph: Any, thread_id: str) -> dict[str, Any]:
    """The thread's final values (for the saga: its thread id written ``<thread>``)."""
    if workflow == "pipeline":
        return d.final_values(graph, thread_id)
    return s.final_values(graph, thread_id)


def _child(
    workflow: str, backend: str, url: str, area: str, thread_id: str, kill: KillAt | None
) -> None:
    try:
        s.STORE[:] = [s.EffectStore(backend, url, area)]
        with d.open_saver(backend, url, area, pool_size=2) as saver:
            arm(saver, kill)
            drive(workflow, graph_of(workflow, saver), saver, thread_id)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


def run_worker(
    backend: str,
    url: str,
    area: str,
    thread_id: str,
    kill: KillAt | None,
    workflow: str = "pipeline",
) -> int:
    """Run one worker process of ``workflow`` to its end or its kill; return its exit code."""
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_child, args=(workflow, backend, url, area, thread_id, kill))
    proc.start()
    proc.join(120)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError(f"worker for {thread_id} hung (killed at {kill})")
    assert proc.exitcode is not None
    return proc.exitcode


def reference_run(
    saver: Any, thread_id: str, workflow: str = "pipeline", store: s.EffectStore | None = None
) -> tuple[dict[str, Any], Counter[str]]:
    """An uninterrupted run in this process: its final values and call counts."""
    counts: Counter[str] = Counter()
    s.STORE[:] = [store] if store is not None else []
    arm(saver, None, counts)
    graph = graph_of(workflow, saver)
    drive(workflow, graph, saver, thread_id)
    return final_values(workflow, graph, thread_id), counts
