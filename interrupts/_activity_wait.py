"""Before an activity's side effect: wait until the checkpoint its step runs from is stored.

An activity's idempotency key holds the task id, which LangGraph derives from
the id of the checkpoint the step runs from (and, in a subgraph, from each
enclosing graph's checkpoint). Under LangGraph's default ``durability="async"``
that checkpoint is stored in the background while the step's tasks run: a
process killed after the side effect but before the checkpoint is stored
restarts the step from the checkpoint before, under a new id, hence a new key.
So the first call of a key waits (bounded) until every checkpoint of its task's
chain is stored; the side effect then runs under a key the retried step shares.

* ``"sync"``: LangGraph stores a step's checkpoint before the step's tasks
  start: nothing to wait for.
* ``"async"``: our savers tell in process when a put of theirs returned
  (:class:`~langgraph_durable.checkpointers.CheckpointPuts`, no read); other
  savers are read with ``get_tuple``, polled with backoff until the checkpoint
  is there.
* ``"exit"``: checkpoints are stored when the run ends, after every side
  effect: waiting would never end. Nothing is waited for, and the keys hold
  within the run (retries) but not across a crash; a warning says so once per
  process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.checkpointers import CheckpointPuts, PutFailed, feature
from langgraph_durable.interrupts._errors import InterruptsError
from langgraph_durable.interrupts._pregel import TaskContext, run_saver

__all__ = ["STORED_TIMEOUT", "CheckpointNotStored", "await_stored", "wait_stored"]

STORED_TIMEOUT = 30.0
"""How long, in seconds, an activity waits for its step's checkpoint by default."""

_FIRST_DELAY = 0.005
_MAX_DELAY = 0.25
_log = logging.getLogger("langgraph_durable.interrupts.activity")
_warned_exit = False
_READERS_PER_SAVER = 4
# each saver's reads on threads of its own: a read past its bound keeps its
# thread, and a saver that hangs must not hold up the waits on other savers
_readers: weakref.WeakKeyDictionary[Any, ThreadPoolExecutor] = weakref.WeakKeyDictionary()
_readers_lock = threading.Lock()
_shared_readers: ThreadPoolExecutor | None = None


class CheckpointNotStored(InterruptsError, TimeoutError):
    """An activity did not call its side effect: its step's checkpoint is not stored.

    Nothing was called and nothing recorded; the node fails (LangGraph's retry
    policy, or a later resume, runs it again).

    Attributes:
        activity: The activity's name.
        thread_id: The thread.
        checkpoint_ns: The namespace of the checkpoint waited for.
        checkpoint_id: The checkpoint waited for.
        reason: Why it is not stored (the wait's bound passed, or its put failed).
    """

    def __init__(
        self, *, activity: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str, reason: str
    ) -> None:
        self.activity = activity
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        self.reason = reason
        super().__init__(
            f"activity {activity!r} not called: checkpoint {checkpoint_id!r} of thread "
            f"{thread_id!r} (namespace {checkpoint_ns!r}) is not stored ({reason})"
        )


def _must_wait(ctx: TaskContext) -> bool:
    """Whether waiting can keep the key: not without a thread, under "sync" or "exit"."""
    if ctx.thread_id is None or ctx.durability == "sync":
        return False
    if ctx.durability == "exit":
        _warn_exit()
        return False
    return True


def _warn_exit() -> None:
    global _warned_exit
    if not _warned_exit:
        _warned_exit = True
        _log.warning(
            'an activity runs under durability="exit": its key holds within the run, but a '
            "crash restarts the run from its start under new keys, so the side effect may "
            'run again; use durability="async" (the default) or "sync" for exactly-once'
        )


def _config(thread_id: str, ns: str, checkpoint_id: str) -> Any:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _refused(ctx: TaskContext, name: str, ns: str, cid: str, reason: str) -> CheckpointNotStored:
    return CheckpointNotStored(
        activity=name,
        thread_id=str(ctx.thread_id),
        checkpoint_ns=ns,
        checkpoint_id=cid,
        reason=reason,
    )


# what the wait asks its driver to do, and what it is sent back:
# ("put", (thread, ns, id, seconds)) -> stored in this process in time (or PutFailed thrown in);
# ("read", (config, seconds)) -> the checkpoint tuple or None; ("sleep", seconds) -> None
Step = tuple[str, Any]


def _steps(
    ctx: TaskContext, name: str, timeout: float, puts: Any, hint: str
) -> Generator[Step, Any, None]:
    """The wait, I/O-free: yields what to wait for or read, until every checkpoint is stored."""
    until = time.monotonic() + timeout
    tid = str(ctx.thread_id)
    for ns, cid in ctx.checkpoints:
        if puts is not None and puts.put_stored(tid, ns, cid):
            continue
        if not (yield from _level_stores(tid, ns, puts, until)):
            continue
        delay = _FIRST_DELAY
        try:
            # ours: woken when the put returns; read in between for a put of another process
            while not (puts is not None and (yield "put", (tid, ns, cid, _left(until, delay)))):
                if (yield "read", (_config(tid, ns, cid), _left(until))) is not None:
                    break
                if _left(until) <= 0:
                    raise _refused(ctx, name, ns, cid, f"not stored after {timeout:g} s{hint}")
                if puts is None:
                    yield "sleep", _left(until, delay)
                delay = min(delay * 2, _MAX_DELAY)
        except PutFailed as failed:
            raise _refused(ctx, name, ns, cid, _failure(failed)) from failed


def _level_stores(tid: str, ns: str, puts: Any, until: float) -> Generator[Step, Any, bool]:
    """Whether the graph level of namespace ``ns`` stores its checkpoints.

    The root does. A subgraph compiled with ``checkpointer=False`` stores none,
    yet its tasks' map names a checkpoint of its level (new on every run, so
    its keys cannot hold across a crash anyway). A level that stores them
    reads its latest checkpoint when its loop starts: our savers tell whether
    they saw that namespace; on other savers, its latest checkpoint is read.
    """
    if not ns:
        return True
    if puts is not None:
        return bool(puts.namespace_seen(tid, ns))
    latest = {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}
    return (yield "read", (latest, _left(until))) is not None


def _start(ctx: TaskContext, name: str, timeout: float, *, sync: bool) -> tuple[Any, Any, Any]:
    """(saver, its CheckpointPuts or None, the steps), or steps None when nothing is waited for."""
    saver = run_saver(ctx.configurable)
    if saver is None or not _must_wait(ctx):
        return saver, None, None
    puts = feature(saver, CheckpointPuts)
    hint = _starved_hint(saver) if sync and puts is None else ""
    return saver, puts, _steps(ctx, name, timeout, puts, hint)


def _starved_hint(saver: Any) -> str:
    """What likely kept the checkpoint from being stored, for a sync node of an async graph.

    An async graph runs its sync nodes in the event loop's default executor,
    where an async saver may also prepare its puts (LangGraph's Postgres one
    does, with ``asyncio.to_thread``). A waiting sync node holds its worker:
    with as many of them as the executor has workers, the put gets none until
    the waits end. Our savers tell in process and need no worker.
    """
    in_loop_executor = threading.current_thread().name.startswith("asyncio_")
    if not in_loop_executor or type(saver).aput is BaseCheckpointSaver.aput:
        return ""
    return (
        f"; this sync node waited in the event loop's default executor, where "
        f"{type(saver).__name__} may need a free worker to store the checkpoint: with as many "
        f"sync nodes waiting as it has workers (min(32, CPUs + 4)), none is left for the put; "
        f'use an async node, or durability="sync"'
    )


def _advance(steps: Generator[Step, Any, None], reply: Any, failed: PutFailed | None) -> Any:
    """The wait's next step, given the last one's reply or failure; None once it is over."""
    try:
        return steps.throw(failed) if failed is not None else steps.send(reply)
    except StopIteration:
        return None


def wait_stored(ctx: TaskContext, name: str, timeout: float) -> None:
    """Return once the checkpoints ``ctx``'s task runs from are stored.

    Raises:
        CheckpointNotStored: After ``timeout`` seconds, or when a put failed.
    """
    saver, puts, steps = _start(ctx, name, timeout, sync=True)
    reply, failed = None, None
    while steps is not None and (step := _advance(steps, reply, failed)) is not None:
        (kind, arg), reply, failed = step, None, None
        try:
            if kind == "put":
                reply = puts.wait_put(*arg)
            elif kind == "read":
                reply = _read_within(saver, *arg)
            else:
                time.sleep(arg)
        except PutFailed as exc:
            failed = exc


async def await_stored(ctx: TaskContext, name: str, timeout: float) -> None:
    """Async twin of :func:`wait_stored`."""
    saver, puts, steps = _start(ctx, name, timeout, sync=False)
    reply, failed = None, None
    while steps is not None and (step := _advance(steps, reply, failed)) is not None:
        (kind, arg), reply, failed = step, None, None
        try:
            if kind == "put":
                reply = await puts.await_put(*arg)
            elif kind == "read":
                reply = await _aread_within(saver, *arg)
            else:
                await asyncio.sleep(arg)
        except PutFailed as exc:
            failed = exc


def _failure(failed: PutFailed) -> str:
    return f"the put of checkpoint {failed.checkpoint_id!r} failed: {failed.reason}"


def _left(until: float, most: float | None = None) -> float:
    left = max(until - time.monotonic(), 0.0)
    return left if most is None else min(left, most)


def _read_within(saver: Any, config: Any, timeout: float) -> Any:
    """``saver.get_tuple(config)``, or ``None`` after ``timeout``.

    In a thread of its own: a saver may hold its reads behind the put it is
    making (LangGraph's own savers do, on one lock), and the bound must hold.
    """
    try:
        return _reader(saver).submit(saver.get_tuple, config).result(timeout=max(timeout, 0.001))
    except FuturesTimeout:
        return None


def _reader(saver: Any) -> ThreadPoolExecutor:
    """The threads that read ``saver`` (made on first use, gone with the saver)."""
    global _shared_readers
    with _readers_lock:
        try:
            pool = _readers.get(saver)
            if pool is None:
                pool = _readers[saver] = _pool()
        except TypeError:  # neither weakly referable nor hashable: threads shared by such savers
            if _shared_readers is None:
                _shared_readers = _pool()
            pool = _shared_readers
        return pool


def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(
        max_workers=_READERS_PER_SAVER, thread_name_prefix="lgd-activity-read"
    )


async def _aread_within(saver: Any, config: Any, timeout: float) -> Any:
    """Async twin of :func:`_read_within`."""
    try:
        return await asyncio.wait_for(_aread(saver, config), max(timeout, 0.001))
    except asyncio.TimeoutError:
        return None


async def _aread(saver: Any, config: Any) -> Any:
    aget: Callable[[Any], Awaitable[Any]] | None = getattr(saver, "aget_tuple", None)
    try:
        if aget is not None:
            return await aget(config)
    except NotImplementedError:  # a saver with sync reads only
        pass
    return await asyncio.to_thread(saver.get_tuple, config)
