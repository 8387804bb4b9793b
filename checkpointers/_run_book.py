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
* Any other end (static breakpoints, recursion limit, cancellation, an
  exception outside a task) is silent. It is caught by liveness: once nothing
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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, TASKS

from langgraph_durable.checkpointers._leases import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_GONE,
    ENDED_INTERRUPTED,
    LeaseSettings,
    clip_error,
)

RUNTIME_KEY = "__pregel_runtime"
RESUME = "__resume__"
START = "__start__"
# Channels through which a StateGraph or functional-API graph triggers nodes.
_TRIGGER_PREFIXES = ("branch:to:", "join:")
_RUN_SOURCES = ("input", "loop")
_ENDED_MEMORY = 4096


def may_have_next(checkpoint: Mapping[str, Any]) -> bool:
    """Whether a step could follow ``checkpoint`` (``False`` means the run is done).

    Conservative: ``True`` whenever in doubt. A checkpoint has a next task only
    if its last step updated a channel some node is triggered by, or left
    ``Send`` packets. Node triggers are the ``branch:to:``/``join:`` channels and
    ``__start__`` (StateGraph, functional API) plus, for raw Pregel graphs, the
    channels recorded in ``versions_seen`` by nodes that ran before.
    """
    updated = checkpoint.get("updated_channels")
    if updated is None:
        return True
    values = checkpoint.get("channel_values") or {}
    if values.get(TASKS):
        return True
    seen = checkpoint.get("versions_seen") or {}
    known: set[str] = set()
    for node, versions in seen.items():
        if node != INTERRUPT and isinstance(versions, Mapping):
            known.update(versions)
    return any(c == START or c.startswith(_TRIGGER_PREFIXES) or c in known for c in updated)


def end_shown_by(checkpoint_tuple: Any) -> str | None:
    """How a thread's latest root checkpoint says its last run ended, if it did.

    ``"interrupted"`` (waiting at an interrupt: a pending ``__interrupt__``
    write and no ``__resume__``), ``"finished"`` (no step can follow), or
    ``None``: unfinished, a run is going or died mid-way. ``checkpoint_tuple``
    is what ``get_tuple`` returns (``None``: no checkpoint, so not ended).
    """
    if checkpoint_tuple is None:
        return None
    channels = {w[1] for w in checkpoint_tuple.pending_writes or ()}
    if INTERRUPT in channels and RESUME not in channels:
        return ENDED_INTERRUPTED
    if ERROR not in channels and not may_have_next(checkpoint_tuple.checkpoint):
        return ENDED_FINISHED
    return None


def _thread_and_ns(config: Mapping[str, Any]) -> tuple[str | None, str, Any]:
    conf = config.get("configurable") or {}
    thread_id = conf.get("thread_id")
    return (
        None if thread_id is None else str(thread_id),
        str(conf.get("checkpoint_ns") or ""),
        conf.get(RUNTIME_KEY),
    )


@dataclass
class Held:
    """A lease this process holds, and what the book knows of its run."""

    thread_id: str
    token: int
    runtime: Any  # the run's Runtime; None until the first write of an adopted run
    last_activity: float = field(default_factory=time.monotonic)
    progress: tuple[datetime, str | None] | None = None
    error: str | None = None
    ending: bool = False  # an __error__ was written: the run is probably ending
    pending: bool = False  # decided to start, lease not acquired yet
    # contested: another owner held a live lease when the run started; its
    # (token, renewed_at). The run goes on unleased; the heartbeat takes the
    # lease over once that holder is provably dead, or it is released.
    rival: tuple[int, datetime | None] | None = None
    # the contested run ended cleanly with this reason: release the rival's
    # lease for it once the rival is provably dead (a killed run's lease must
    # not outlive the run that finished the thread)
    closing: str | None = None

    @property
    def ours(self) -> bool:
        """Whether the lease is (being) held by this process, not by a rival."""
        return self.rival is None


@dataclass(frozen=True)
class Decision:
    """What to do around one saver call.

    Attributes:
        start: Acquire the lease before the write (a new run of the thread).
        end: Release after the write, with this reason.
        error: An error text to record (the run wrote ``__error__``).
    """

    thread_id: str | None = None
    runtime: Any = None
    start: bool = False
    end: str | None = None
    error: str | None = None


NOTHING = Decision()


@dataclass(frozen=True)
class Plan:
    """One heartbeat's work.

    Attributes:
        renew: Threads whose lease to renew.
        progress: Progress to record with the renewal.
        ended: ``(thread_id, reason, error)`` of runs found over: release them.
        collect: Run the cycle collector first (a run may be held by a traceback).
        contest: Contested runs still going: try to take their lease.
        clear: ``(thread_id, rival token, reason)`` of contested runs that ended
            cleanly: release the rival's lease once the rival is dead.
    """

    renew: list[str]
    progress: dict[str, tuple[datetime, str | None]]
    ended: list[tuple[str, str, str | None]]
    collect: bool = False
    contest: list[str] = field(default_factory=list)
    clear: list[tuple[str, int, str]] = field(default_factory=list)


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
            if held is None or held.rival is None:
                return
            held.closing = reason
            self._ended[thread_id] = runtime
            self._ended.move_to_end(thread_id)
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
                    reason = ENDED_ERROR if held.ending else ENDED_GONE
                    ended.append((held.thread_id, reason, held.error))
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

    def runtime_of(self, thread_id: str) -> Any:
        """The Runtime of a held run (to ask it to drain when the lease is lost)."""
        with self._lock:
            held = self._held.get(thread_id)
            return None if held is None else held.runtime


def _only_we_hold(held: Held) -> bool:
    # one reference from ``held`` and one from getrefcount's own argument
    return sys.getrefcount(held.runtime) <= 2


def _as_error(value: Any) -> BaseException | str:
    return value if isinstance(value, BaseException) else repr(value)
