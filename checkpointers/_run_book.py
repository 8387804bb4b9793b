"""What a saver sees of a run, and when that means "the run started" or "ended".

This is the I/O-free half of run leases: :class:`RunBook` watches the calls
LangGraph makes on a saver and decides when the saver must take, keep or give
up a thread's lease. :mod:`langgraph_durable.checkpointers._run_leases` drives it against a lease
store from a background heartbeat.

What a saver sees (checked on langgraph 1.2):

* Every ``put``/``put_writes`` a run makes carries, in
  ``config["configurable"]["__pregel_runtime"]``, the run's ``Runtime`` object:
  one object per ``invoke``/``stream`` call, shared by all its writes, gone
  when the run is over. That object is the run's identity.
* A run starts with a write: the input checkpoint (``source == "input"``), a
  ``__resume__`` write, or the writes of the first task of ``invoke(None)``.
* A run pauses at an interrupt with a root-namespace write to ``__interrupt__``.
* A run that ends normally writes a last checkpoint with no next task, and
  then nothing: there is no "end" call. :func:`may_have_next` reads that from
  the checkpoint (which channels the last step updated).
* A run that raises writes ``__error__`` (unless a node error handler takes
  over, and then it goes on).
* A run that pauses at a static breakpoint writes nothing that says so:
  LangGraph's loop knows (its ``status``, or for a subgraph's breakpoint the
  interrupt event it queues), and the saver reads it as the loop exits
  (:meth:`~langgraph_durable.checkpointers._run_leases_async.AsyncRunLeases.returned`).
* Any other end (recursion limit, cancellation, an exception outside a task,
  a breakpoint of a loop the saver could not find) is silent. It is caught by liveness: once nothing
  but the lease book references the run's ``Runtime`` object, the run is over
  (CPython frees it when ``invoke`` returns; a traceback keeps it until the
  exception is dropped or the cycle collector runs).

Nodes need no code for any of this.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from langgraph_durable.checkpointers._leases import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_GONE,
    ENDED_INTERRUPTED,
    LeaseSettings,
    clip_error,
)
from langgraph_durable.checkpointers._run_ends import RESUME, end_shown_by, may_have_next
from langgraph_durable.checkpointers._run_records import NOTHING, Decision, Held, Plan

__all__ = [
    "NOTHING",
    "RESUME",
    "RUNTIME_KEY",
    "Decision",
    "Held",
    "Plan",
    "RunBook",
    "end_shown_by",
    "may_have_next",
]

RUNTIME_KEY = "__pregel_runtime"
_RUN_SOURCES = ("input", "loop")
_ENDED_MEMORY = 4096


def _thread_and_ns(config: Mapping[str, Any]) -> tuple[str | None, str, Any]:
    conf = config.get("configurable") or {}
    thread_id = conf.get("thread_id")
    return (
        None if thread_id is None else str(thread_id),
        str(conf.get("checkpoint_ns") or ""),
        conf.get(RUNTIME_KEY),
    )


class RunBook:
    """The leases one saver holds, and the rules that start and end them (no I/O).

    Thread-safe: LangGraph calls savers from several threads at once.
    """

    def __init__(self, settings: LeaseSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._held: dict[str, Held] = {}
        # the Runtime of each thread's last ended run, so its late writes
        # (a parallel task finishing after the interrupt) do not start a run
        self._ended: OrderedDict[str, Any] = OrderedDict()
        self._last_collect = 0.0

    # -- observing saver calls --

    def on_put(
        self, config: Mapping[str, Any], checkpoint: Mapping[str, Any], metadata: Mapping[str, Any]
    ) -> tuple[Decision, Decision]:
        """``(before, after)`` decisions for a ``put``."""
        thread_id, ns, runtime = _thread_and_ns(config)
        if thread_id is None or runtime is None or metadata.get("source") not in _RUN_SOURCES:
            return NOTHING, NOTHING
        before = self._observe(thread_id, ns, runtime)
        if ns or before is None:
            return before or NOTHING, NOTHING
        after = NOTHING
        if not may_have_next(checkpoint):
            after = Decision(thread_id, runtime, end=ENDED_FINISHED)
        return before, after

    def on_writes(
        self, config: Mapping[str, Any], writes: Iterable[tuple[str, Any]]
    ) -> tuple[Decision, Decision]:
        """``(before, after)`` decisions for a ``put_writes``."""
        thread_id, ns, runtime = _thread_and_ns(config)
        if thread_id is None or runtime is None:
            return NOTHING, NOTHING
        before = self._observe(thread_id, ns, runtime)
        if ns or before is None:
            return before or NOTHING, NOTHING
        channels = {c: v for c, v in writes}
        if INTERRUPT in channels:
            if self._defer_end(thread_id, runtime, ENDED_INTERRUPTED):
                return before, NOTHING
            return before, Decision(thread_id, runtime, end=ENDED_INTERRUPTED)
        if ERROR in channels:
            error = clip_error(_as_error(channels[ERROR]))
            return before, Decision(thread_id, runtime, error=error)
        return before, NOTHING

    def _observe(self, thread_id: str, ns: str, runtime: Any) -> Decision | None:
        """The 'before' decision, or ``None`` for a late write of an ended run."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None and (
                held.ours or (held.closing is None and (ns or held.runtime is runtime))
            ):
                held.last_activity = time.monotonic()
                if not ns and held.runtime is not runtime:
                    # a root write names the run: adopt it as the liveness handle
                    held.runtime = runtime
                return NOTHING
            if not ns and self._ended.get(thread_id) is runtime:
                return None
            # no entry, or a contested entry of another run: this write starts a run
            # reserve it now, so concurrent writes of the run do not start it twice
            self._held[thread_id] = Held(thread_id, 0, runtime, pending=True)
            self._ended.pop(thread_id, None)
        return Decision(thread_id, runtime, start=True)

    def _defer_end(self, thread_id: str, runtime: Any, reason: str) -> bool:
        """An admitted run paused: keep its lease until it returns (``True``).

        A task still running beside the one that paused writes after the
        pause; a queued run must not start before it is done.
        """
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or not held.admitted or held.runtime is not runtime:
                return False
            held.end_reason = reason
            return True

    # -- runs with a multitask strategy --

    def admit(self, thread_id: str, runtime: Any) -> tuple[str, Held | None]:
        """Book the start of ``runtime``'s run with a strategy (no I/O).

        Returns ``("held", None)`` when the run holds the lease already (or
        takes over a recovery worker's claim), ``("busy", None)`` when another
        run of this process holds the thread (``"lingering"``: one that paused
        or failed, maybe over but not collected yet), or ``("reserved", previous)``:
        acquire the lease now, then :meth:`confirm` or :meth:`unreserve`.
        """
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None:
                if held.runtime is runtime and not held.pending:
                    held.admitted = True
                    return "held", None
                if held.ours and held.runtime is None and not held.pending:
                    # claimed by a recovery worker (adopt): this is its run
                    held.runtime, held.admitted = runtime, True
                    return "held", None
                if held.pending or held.runtime is None or not _only_we_hold(held):
                    # paused or failed: maybe over, held by a reference cycle
                    ended = (held.ending or held.end_reason) and not held.pending
                    return ("lingering" if ended else "busy"), None
                # the run holding it is over, its release not sent yet: replace it
            self._held[thread_id] = Held(thread_id, 0, runtime, pending=True, admitted=True)
            self._ended.pop(thread_id, None)
            return "reserved", held

    def unreserve(self, thread_id: str, runtime: Any, previous: Held | None) -> None:
        """Undo :meth:`admit`'s reservation (the lease is held elsewhere)."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or not held.pending or held.runtime is not runtime:
                return
            if previous is None:
                del self._held[thread_id]
            else:
                self._held[thread_id] = previous

    def watch(self, now: float) -> tuple[list[tuple[str, str, str | None]], float | None, bool]:
        """Find admitted runs that are over: ``(ended, lingering, going)``.

        ``ended`` as in :class:`Plan`. ``lingering``: seconds since the oldest
        admitted run that paused or failed is still referenced (``None``: no
        such run); a run that returned lingers in a reference cycle (LangGraph's
        loop refers to itself) until the cycle collector runs. ``going``:
        admitted runs are still going.
        """
        ended: list[tuple[str, str, str | None]] = []
        lingering: float | None = None
        going = False
        with self._lock:
            for held in self._held.values():
                if not held.admitted or held.pending or held.rival is not None:
                    continue
                if held.runtime is not None and _only_we_hold(held):
                    ended.append((held.thread_id, _end_reason(held), held.error))
                    continue
                going = True
                if held.ending or held.end_reason:
                    since = now - held.last_activity
                    lingering = since if lingering is None else max(lingering, since)
        return ended, lingering, going

    def end_run(
        self, thread_id: str, runtime: Any, *, paused: bool = False
    ) -> tuple[Held, str] | None:
        """``runtime``'s run returned: forget its lease, with the reason to release.

        For an admitted run (a multitask strategy) and for one that ``paused``
        (a static breakpoint, ``interrupt_before``/``interrupt_after``, writes
        nothing that says so): a pause is released as ``interrupted``, so
        recovery never takes it for an orphan. A contested run that paused keeps its
        entry, closing, for the heartbeat to clear the rival's lease.
        """
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or held.runtime is not runtime or held.pending:
                return None  # released with its last checkpoint, or not ours
            if not (held.admitted or paused):
                return None  # its writes or liveness end it
            if held.rival is not None:
                if held.closing is None:
                    self._close(held, runtime, ENDED_INTERRUPTED)
                return None
            self._drop(thread_id, None)
            return held, ENDED_INTERRUPTED if paused and not held.ending else _end_reason(held)

    def drop_over(self, thread_id: str) -> Held | None:
        """Forget ``thread_id``'s lease if its run is over (not if a new run took its place)."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or held.runtime is None or not _only_we_hold(held):
                return None
            return self._drop(thread_id, None)

    # -- bookkeeping after I/O --

    def hold(self, thread_id: str, token: int, runtime: Any) -> None:
        """Record a lease this process now holds."""
        with self._lock:
            self._held[thread_id] = Held(thread_id, token, runtime)
            self._ended.pop(thread_id, None)

    def is_reserved(self, thread_id: str, runtime: Any) -> bool:
        """Whether a start decided for ``runtime`` still stands (not ended meanwhile)."""
        with self._lock:
            held = self._held.get(thread_id)
            return held is not None and held.pending and held.runtime is runtime

    def confirm(self, thread_id: str, token: int) -> None:
        """The reserved lease was acquired."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None:
                held.pending = False
                held.token = token

    def contest(
        self, thread_id: str, runtime: Any, token: int, renewed_at: datetime | None
    ) -> bool:
        """The reserved start found another owner's live lease: run on, contested."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or held.runtime is not runtime or not (held.pending or held.rival):
                return False
            held.pending = False
            held.rival = (token, renewed_at)
            return True

    def win(self, thread_id: str, runtime: Any, token: int) -> bool:
        """A contested run took the lease over (``False``: the run ended meanwhile)."""
        with self._lock:
            held = self._held.get(thread_id)
            if (
                held is None
                or held.rival is None
                or held.closing is not None
                or held.runtime is not runtime
            ):
                return False
            held.rival = None
            held.token = token
            return True

    def close(self, thread_id: str, runtime: Any, reason: str) -> None:
        """A contested run ended cleanly: keep the entry to clear the rival's lease."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None and held.rival is not None:
                self._close(held, runtime, reason)

    def _close(self, held: Held, runtime: Any, reason: str) -> None:
        held.closing = reason
        self._ended[held.thread_id] = runtime
        self._ended.move_to_end(held.thread_id)
        held.runtime = None

    def forget(self, thread_id: str, closing: str) -> None:
        """Drop a closing entry once its rival's lease is settled."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None and held.closing == closing:
                del self._held[thread_id]

    def closing_of(self, thread_id: str) -> tuple[int, str] | None:
        """``(rival token, reason)`` of a closing entry."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None or held.rival is None or held.closing is None:
                return None
            return held.rival[0], held.closing

    def rival_of(self, thread_id: str) -> tuple[Any, tuple[int, datetime | None] | None]:
        """``(runtime, rival)`` of a tracked run."""
        with self._lock:
            held = self._held.get(thread_id)
            return (None, None) if held is None else (held.runtime, held.rival)

    def drop(self, thread_id: str, runtime: Any = None) -> Held | None:
        """Forget a held lease; remember ``runtime`` as the thread's ended run."""
        with self._lock:
            return self._drop(thread_id, runtime)

    def _drop(self, thread_id: str, runtime: Any) -> Held | None:
        held = self._held.pop(thread_id, None)
        ended = runtime if runtime is not None else (held.runtime if held else None)
        if ended is not None:
            self._ended[thread_id] = ended
            self._ended.move_to_end(thread_id)
            while len(self._ended) > _ENDED_MEMORY:
                self._ended.popitem(last=False)
        return held

    def restore(self, held: Held) -> None:
        """Hold ``held`` again (its release failed), unless a new run took its place."""
        with self._lock:
            self._held.setdefault(held.thread_id, held)
            if self._ended.get(held.thread_id) is held.runtime:
                del self._ended[held.thread_id]

    def mark_ending(self, thread_id: str, error: str | None) -> None:
        """The run wrote ``__error__``: it is probably ending (unless a handler takes over)."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None:
                held.ending = True
                held.error = error

    def holds(self, thread_id: str) -> bool:
        """Whether this process holds ``thread_id``'s lease (or is acquiring it)."""
        with self._lock:
            held = self._held.get(thread_id)
            return held is not None and held.ours

    def is_contested(self, thread_id: str, runtime: Any) -> bool:
        """Whether ``runtime``'s run of the thread runs without the lease (a rival has it)."""
        with self._lock:
            held = self._held.get(thread_id)
            return (
                held is not None
                and held.rival is not None
                and held.closing is None
                and held.runtime is runtime
            )

    def held_threads(self) -> list[str]:
        """The threads this process holds or watches (the heartbeat runs while any)."""
        with self._lock:
            return list(self._held)

    def touch(self, thread_id: str, now: datetime, note: str | None) -> bool:
        """Record progress of a held run (``heartbeat()``); ``False`` if not held."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None:
                return False
            held.last_activity = time.monotonic()
            held.progress = (now, note)
            return True

    # -- the heartbeat --

    def plan(self) -> Plan:
        """Decide one heartbeat: which leases to renew and which runs are over."""
        now = time.monotonic()
        interval = self.settings.heartbeat.total_seconds()
        max_idle = self.settings.max_idle.total_seconds() if self.settings.max_idle else None
        renew: list[str] = []
        progress: dict[str, tuple[datetime, str | None]] = {}
        ended: list[tuple[str, str, str | None]] = []
        collect = False
        contest: list[str] = []
        clear: list[tuple[str, int, str]] = []
        with self._lock:
            for held in list(self._held.values()):
                if held.pending:
                    continue
                if held.rival is not None:
                    if held.closing is not None:
                        clear.append((held.thread_id, held.rival[0], held.closing))
                    elif held.runtime is not None and _only_we_hold(held):
                        del self._held[held.thread_id]  # a contested run is over
                    else:
                        contest.append(held.thread_id)
                    continue
                if held.runtime is not None and _only_we_hold(held):
                    ended.append((held.thread_id, _end_reason(held), held.error))
                    continue
                idle = now - held.last_activity
                if max_idle is not None and idle > max_idle:
                    continue  # a hung run: let its lease lapse
                if held.ending or idle >= 3 * interval:
                    collect = True
                renew.append(held.thread_id)
                if held.progress is not None:
                    progress[held.thread_id] = held.progress
                    held.progress = None
            if collect and now - self._last_collect >= 3 * interval:
                self._last_collect = now
            else:
                collect = False
        return Plan(renew, progress, ended, collect, contest, clear)

    def release_all(self) -> list[tuple[str, str, str | None]]:
        """Forget every lease this process holds: ``(thread_id, reason, error)`` to release.

        For a saver that is closing: a run still going cannot write through it
        any more. Its reason is ``error`` if it wrote ``__error__``, else
        ``ended``. Contested entries hold no lease of ours and are dropped; a
        start still acquiring its lease is left to that call.
        """
        out: list[tuple[str, str, str | None]] = []
        with self._lock:
            for held in list(self._held.values()):
                if held.pending:
                    continue
                del self._held[held.thread_id]
                if held.rival is None:
                    reason = ENDED_ERROR if held.ending else ENDED_GONE
                    out.append((held.thread_id, reason, held.error))
        return out

    def runtime_of(self, thread_id: str) -> Any:
        """The Runtime of a held run (to ask it to drain when the lease is lost)."""
        with self._lock:
            held = self._held.get(thread_id)
            return None if held is None else held.runtime


def _end_reason(held: Held) -> str:
    """Why a run found over ended, for its release."""
    if held.ending:
        return ENDED_ERROR
    return held.end_reason or ENDED_GONE


def _only_we_hold(held: Held) -> bool:
    # one reference from ``held`` and one from getrefcount's own argument
    return sys.getrefcount(held.runtime) <= 2


def _as_error(value: Any) -> BaseException | str:
    return value if isinstance(value, BaseException) else repr(value)
