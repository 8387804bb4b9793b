"""``heartbeat()``: a node reports progress on its thread's run lease."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config

_CHECKPOINTER_KEY = "__pregel_checkpointer"
_RUNTIME_KEY = "__pregel_runtime"


def heartbeat(note: str | None = None) -> bool:
    """Report that the current node is making progress.

    Nodes need no code to keep their run's lease alive: the saver renews it in
    the background for as long as the run's process runs it. Call this from
    long work when the saver was configured with ``max_idle`` (then a run that
    reports no progress for that long is treated as hung), or to record a
    progress note that ``status``/``inspect`` show. It never does I/O: the
    note travels with the next background renewal. It also counts as progress
    for LangGraph's own idle timeouts (``runtime.heartbeat()``).

    Args:
        note: A short progress note (e.g. ``"page 3 of 10"``).

    Returns:
        ``True`` if the run's lease is held by this process and was touched.

    Raises:
        RuntimeError: called outside a running graph node.
    """
    config: Any = get_config()
    conf = config.get("configurable") or {}
    runtime = conf.get(_RUNTIME_KEY)
    beat = getattr(runtime, "heartbeat", None)
    if callable(beat):
        beat()
    saver = conf.get(_CHECKPOINTER_KEY)
    leases = getattr(saver, "run_leases", None) or getattr(saver, "arun_leases", None)
    thread_id = conf.get("thread_id")
    if leases is None or thread_id is None:
        return False
    return bool(leases.touch(str(thread_id), None if note is None else str(note)[:500]))
