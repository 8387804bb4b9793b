"""Multitask strategies: what a second run of a thread does while a live run holds it.

LangGraph Platform calls these *multitask strategies*; here two of them are
built on run leases (:mod:`langgraph_durable.checkpointers._run_leases`):

``reject``
    A run that starts on a thread whose lease a live run holds raises
    :class:`~langgraph_durable.checkpointers.ThreadBusy`.
``enqueue``
    It waits (bounded by a timeout, then ``ThreadBusy``) until the holder is
    done, then runs on the thread's latest checkpoint, so it sees what the
    holder wrote.

A run with a strategy takes its lease when LangGraph reads the thread to begin
the run: the loop's ``get_tuple`` of the root namespace, whose config carries
the run's ``Runtime``. That read comes before the run's first write and before
any node runs, so a run turned away has run nothing and written nothing. The
lease then stays with the run until it is over: released with its last
checkpoint when it finishes, and when it pauses or fails, as LangGraph's loop
exits (the callback of
:meth:`~langgraph_durable.checkpointers._run_leases_async.AsyncRunLeases.returned`, pushed on
the loop's exit stack; where the loop
is not found, :func:`watching` notices the run is gone), so a task still
running beside the one that paused never overlaps the next run.

A holder whose process is gone, or that missed its heartbeat, or whose lease
expired, does not block: its lease is taken over
(:func:`~langgraph_durable.checkpointers._lease_flows.start`).

The strategy is chosen per saver (``multitask=`` on the constructor and
``from_conn_string``) and per run, through the run's config:
``{"configurable": {MULTITASK_KEY: "reject" | "enqueue" | "none"}}``, and the
wait with ``MULTITASK_TIMEOUT_KEY`` (seconds, or a ``timedelta``).
"""

from __future__ import annotations

import gc
import logging
import random
import sys
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import FrameType
from typing import Any

from langgraph_durable.checkpointers import _lease_flows as flows
from langgraph_durable.checkpointers._errors import InvalidConfigError, ThreadBusy
from langgraph_durable.checkpointers._lease_flows import (
    Attempt,
    Pause,
    ReleaseEnded,
    Sleep,
)
from langgraph_durable.checkpointers._leases import RUNNING
from langgraph_durable.checkpointers._run_book import RUNTIME_KEY, RunBook

log = logging.getLogger("langgraph_durable.checkpointers.leases")

MULTITASK_KEY = "durable_multitask"
"""Run config key (``configurable``): this run's strategy, overriding the saver's."""

MULTITASK_TIMEOUT_KEY = "durable_multitask_timeout"
"""Run config key (``configurable``): how long an ``enqueue`` run waits, in seconds."""

REJECT = "reject"
ENQUEUE = "enqueue"
NONE = "none"
STRATEGIES = (REJECT, ENQUEUE)
DEFAULT_TIMEOUT = timedelta(seconds=60)

# an enqueued run polls the lease: first after 10 ms, then doubling up to 50 ms
# (jittered, so waiters released together do not ask at the same instant)
_FIRST_PAUSE = 0.01
_MAX_PAUSE = 0.05
# how often admitted runs are checked for being over (a reference count each)
_WATCH = 0.02
_FULL_AFTER = 0.2
_COLLECT_EVERY = 1.0
_COLLECT_FOR = 30.0
# how far up the caller's frames running_loop looks for LangGraph's loop
_FRAMES = 4

Busy = tuple[str | None, datetime | None]
"""``(owner, since)`` of the run holding a thread."""


@dataclass(frozen=True)
class Multitask:
    """A multitask strategy and how long ``enqueue`` waits.

    Attributes:
        strategy: ``"reject"`` or ``"enqueue"``.
        timeout: How long an ``enqueue`` run waits for the holder before it
            raises ``ThreadBusy``.
    """

    strategy: str
    timeout: timedelta = DEFAULT_TIMEOUT


def _strategy(value: Any, field: str) -> str | None:
    if value is None or value == NONE:
        return None
    if value in STRATEGIES:
        return str(value)
    if value in ("interrupt", "rollback"):
        reason = f"{value!r} is not supported; use 'reject', 'enqueue' or 'none'"
    else:
        reason = f"must be 'reject', 'enqueue' or 'none', not {value!r}"
    raise InvalidConfigError(field=field, reason=reason)


def _timeout(value: Any, field: str) -> timedelta:
    if isinstance(value, timedelta):
        timeout = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            timeout = timedelta(seconds=value)
        except (OverflowError, ValueError):
            raise InvalidConfigError(field=field, reason=f"{value!r} is out of range") from None
    else:
        raise InvalidConfigError(
            field=field, reason=f"must be seconds (a number) or a timedelta, not {value!r}"
        )
    if timeout <= timedelta(0):
        raise InvalidConfigError(field=field, reason=f"must be positive, not {value!r}")
    return timeout


def multitask_policy(multitask: Any, timeout: Any, *, leases: bool) -> Multitask | None:
    """The policy a saver's ``multitask=`` and ``multitask_timeout=`` options ask for.

    Raises:
        InvalidConfigError: an unknown strategy, a timeout that is not a
            positive duration, or a strategy on a saver without run leases.
    """
    limit = _timeout(timeout, "multitask_timeout")
    strategy = _strategy(multitask, "multitask")
    if strategy is None:
        return None
    if not leases:
        raise InvalidConfigError(
            field="multitask", reason="needs run leases; the saver has leases=False"
        )
    return Multitask(strategy, limit)


def run_start(
    config: Mapping[str, Any], saver: Multitask | None, *, leases: bool
) -> tuple[str, Any, Multitask] | None:
    """``(thread_id, runtime, policy)`` when ``config`` begins a run with a strategy.

    A run begins with LangGraph's read of the thread's root namespace, whose
    config carries the run's ``Runtime``; reads without one (``get_state``, a
    saver call of your own) and a subgraph's reads are not a run's start.

    Raises:
        InvalidConfigError: the run's config names an unknown strategy or a bad
            timeout, or a strategy on a saver without run leases.
    """
    conf = config.get("configurable") or {}
    if conf.get(RUNTIME_KEY) is None:
        return None
    found = run_policy(config, saver, leases=leases)
    return None if found is None else (found[0], conf[RUNTIME_KEY], found[1])


def run_policy(
    config: Mapping[str, Any], saver: Multitask | None, *, leases: bool
) -> tuple[str, Multitask] | None:
    """``(thread_id, policy)``: the strategy a run started with ``config`` follows, if any.

    The run's own ``configurable`` keys override the saver's; a subgraph's
    config (a namespace) follows its parent's run, not a strategy of its own.

    Raises:
        InvalidConfigError: as :func:`run_start`.
    """
    conf = config.get("configurable") or {}
    if conf.get("checkpoint_ns") or conf.get("thread_id") is None:
        return None
    policy = saver
    if conf.get(MULTITASK_KEY) is not None:
        field = f"configurable.{MULTITASK_KEY}"
        strategy = _strategy(conf[MULTITASK_KEY], field)
        if strategy is None:
            return None
        if not leases:
            raise InvalidConfigError(
                field=field, reason="needs run leases; the saver has leases=False"
            )
        policy = Multitask(strategy, policy.timeout if policy else DEFAULT_TIMEOUT)
    if policy is None:
        return None
    if conf.get(MULTITASK_TIMEOUT_KEY) is not None:
        limit = _timeout(conf[MULTITASK_TIMEOUT_KEY], f"configurable.{MULTITASK_TIMEOUT_KEY}")
        policy = Multitask(policy.strategy, limit)
    return str(conf["thread_id"]), policy


def held_by_a_live_run(record: Any, now: datetime) -> bool:
    """Whether a lease record shows a run that would turn a ``reject`` run away now.

    A holder that is gone (its process exited, it missed its heartbeat, its
    lease expired) does not count: a new run takes its lease over.
    """
    return record is not None and record.state == RUNNING and not flows.rival_is_gone(record, now)


BREAKPOINT_PAUSES = ("interrupt_before", "interrupt_after")
"""The ``status`` of a LangGraph loop that stopped at a static breakpoint."""


def root_run(config: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(thread_id, runtime)`` when ``config`` is a run's read of its thread's root namespace."""
    conf = config.get("configurable") or {}
    runtime = conf.get(RUNTIME_KEY)
    if runtime is None or conf.get("checkpoint_ns") or conf.get("thread_id") is None:
        return None
    return str(conf["thread_id"]), runtime


def running_loop(config: Mapping[str, Any]) -> Any:
    """The LangGraph loop whose start reads ``config``, if found (with its exit stack).

    LangGraph's loop reads the thread with its own ``checkpoint_config`` (this
    very object) while it enters; a callback pushed on its exit stack then
    runs when the loop exits, after its background writes are done: the
    precise end of the run, and the loop's ``status`` says how it ended.
    Looked up on the caller's frames (the saver's read, called from the loop's
    ``__enter__``/``__aenter__``); ``None`` when the read comes from elsewhere
    (another thread, a bridge), and then the run's end is found by
    :func:`watching` and the heartbeat instead.
    """
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_FRAMES):
        if frame is None:
            return None
        loop = frame.f_locals.get("self")
        if getattr(loop, "checkpoint_config", None) is config:
            stack = getattr(loop, "stack", None)
            return loop if isinstance(stack, (ExitStack, AsyncExitStack)) else None
        frame = frame.f_back
    return None


def paused_at_exit(loop: Any) -> bool:
    """Whether LangGraph's ``loop``, exiting, stopped at a pause.

    A static breakpoint of the graph sets the loop's ``status``; one of a
    subgraph (compiled with its own ``interrupt_before``) shows only in the
    interrupt event the loop queued for graph lifecycle callbacks as it
    suppressed the pause (an event with ``interrupts``; a resume event has
    none). Neither is written to the saver. An ``interrupt()`` queues that
    event too: its run is released already (with its ``__interrupt__`` write),
    or it has a strategy and is released here as paused all the same.
    """
    if getattr(loop, "status", None) in BREAKPOINT_PAUSES:
        return True
    events = getattr(loop, "_graph_lifecycle_events", None) or ()
    return any(hasattr(event, "interrupts") for event in events)


def admission(thread_id: str, runtime: Any, policy: Multitask) -> flows.Flow[None]:
    """Take the thread's lease for a run, or wait for it (``enqueue``), or raise.

    Requests: :class:`~langgraph_durable.checkpointers._lease_flows.Attempt` (one
    try, under the thread's I/O lock: ``None`` when the run now holds the lease,
    else the holder's :data:`Busy`) and ``Sleep``.

    Raises:
        ThreadBusy: the thread is held (``reject``), or still held when the
            timeout ran out (``enqueue``).
    """
    started = time.monotonic()
    pause = _FIRST_PAUSE
    while True:
        busy: Busy | None = yield Attempt(thread_id=thread_id, runtime=runtime)
        if busy is None:
            return
        waited = time.monotonic() - started
        left = policy.timeout.total_seconds() - waited
        if policy.strategy == REJECT or left <= 0:
            raise ThreadBusy(
                thread_id=thread_id,
                owner=busy[0],
                since=busy[1],
                strategy=policy.strategy,
                waited=0.0 if policy.strategy == REJECT else waited,
            )
        yield Sleep(seconds=min(left, pause * random.uniform(0.5, 1.0)))
        pause = min(pause * 2, _MAX_PAUSE)


def watching(book: RunBook) -> flows.Flow[None]:
    """Release the leases of admitted runs as soon as they are over.

    Polls the book (reference counts, no I/O) every few milliseconds while any
    admitted run goes on, so the next run of a thread starts right after the
    holder returns instead of at the next heartbeat. Requests: ``Pause`` (``True``
    when the saver is closing) and ``ReleaseEnded``.
    """
    collected = 0.0
    while not (yield Pause(seconds=_WATCH)):
        now = time.monotonic()
        ended, lingering, going = book.watch(now)
        if lingering is not None and lingering <= _COLLECT_FOR:
            # a run that returned lingers in a reference cycle: a young
            # collection frees a short run's at once; a long run's needs a full
            # one, done at most every _COLLECT_EVERY seconds (after
            # _COLLECT_FOR, say a traceback kept, the heartbeat's collections
            # are left to find it)
            full = lingering >= _FULL_AFTER and now - collected >= _COLLECT_EVERY
            if full:
                collected = now
            gc.collect(2 if full else 1)
            ended, _, going = book.watch(now)
        if ended:
            yield ReleaseEnded(ended=ended)
        elif not going:
            return
