"""Idempotent activities: side-effect calls that run once per step, durably.

LangGraph re-executes a node from its first line after a retry, after an
interrupt is answered and after a crash (the task re-runs from the last
checkpoint). A side effect inside the node would happen again each time.
:func:`activity` makes such a call safe:

* every call gets an idempotency key derived from the thread, the task's
  checkpoint namespace (which holds the task id, hence the checkpoint the step
  runs from), the node, the activity's name and the call's index within the
  node's execution: the same on every re-execution of the same step, different
  for the next step or another thread. It is passed to the function as
  ``idempotency_key=`` (for a payment API that de-duplicates on it);
* once the call returns, its result is recorded through the saver (natively if
  it implements :class:`langgraph_durable.checkpointers.ActivityStore`, else as a pending write),
  so a re-executed node gets the recorded result without calling again;
* the first call of a key waits until the checkpoint its step runs from is
  stored (:mod:`._activity_wait`): under LangGraph's default
  ``durability="async"`` that checkpoint is stored in the background, and a
  step restarted from the checkpoint before would get new keys.

A crash between the side effect and the record is the one window left: the
re-executed step calls again, with the same key.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Generic, ParamSpec, TypeVar, cast

from langgraph_durable.interrupts._activity_store import Store, is_missing, store_for
from langgraph_durable.interrupts._activity_wait import STORED_TIMEOUT, await_stored, wait_stored
from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._pregel import TaskContext, current_task
from langgraph_durable.interrupts._telemetry import activity_attributes, traced

P = ParamSpec("P")
R = TypeVar("R")

_counter_lock = threading.Lock()
# attempt token -> (token kept alive so its id is not reused, calls made so far)
_counters: OrderedDict[int, tuple[Any, int]] = OrderedDict()
_MAX_TRACKED_ATTEMPTS = 4096


def _next_index(ctx: TaskContext) -> int:
    token = ctx.attempt_token
    with _counter_lock:
        _, used = _counters.pop(id(token), (token, 0))
        _counters[id(token)] = (token, used + 1)
        while len(_counters) > _MAX_TRACKED_ATTEMPTS:
            _counters.popitem(last=False)
    return used


def idempotency_key(
    *, thread_id: str | None, checkpoint_ns: str, node: str, index: int, name: str
) -> str:
    """The idempotency key of one activity call (stable, 44 characters, URL-safe)."""
    raw = json.dumps([thread_id or "", checkpoint_ns, node, index, name], ensure_ascii=False)
    return "lgd-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:40]


def _accepts_kw(fn: Callable[..., Any], param: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == param or p.kind is p.VAR_KEYWORD for p in params)


class Activity(Generic[P, R]):
    """A side-effect function wrapped by :func:`activity` (call it like the function).

    Attributes:
        fn: The wrapped function.
        name: The name that goes into the key (default: qualified name).
        key_param: The keyword the key is passed as.
        stored_timeout: How long a first call waits for its step's checkpoint, in seconds.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None,
        key_param: str | None,
        stored_timeout: float = STORED_TIMEOUT,
    ) -> None:
        if (
            not isinstance(stored_timeout, int | float)
            or isinstance(stored_timeout, bool)
            or not math.isfinite(stored_timeout)
            or stored_timeout <= 0
        ):
            raise InvalidInput(
                parameter="stored_timeout",
                reason=f"must be a positive number of seconds, not {stored_timeout!r}",
            )
        self.fn = fn
        self.name = name or f"{fn.__module__}.{fn.__qualname__}"
        self.key_param = key_param
        self.stored_timeout = float(stored_timeout)
        self.is_async = inspect.iscoroutinefunction(fn)
        self._pass_key = key_param is not None and _accepts_kw(fn, key_param)
        functools.update_wrapper(self, fn)

    def _prepare(self, kwargs: dict[str, Any]) -> tuple[TaskContext, Store, str]:
        ctx = current_task()
        if ctx is None:
            raise RuntimeError(
                f"activity {self.name!r} must be called inside a graph node "
                "(its idempotency key comes from the running task)"
            )
        if self.key_param and kwargs.get(self.key_param):
            key = str(kwargs[self.key_param])  # the caller chose the key
        else:
            key = idempotency_key(
                thread_id=ctx.thread_id,
                checkpoint_ns=ctx.checkpoint_ns,
                node=ctx.node,
                index=_next_index(ctx),
                name=self.name,
            )
            if self._pass_key and self.key_param is not None:
                kwargs[self.key_param] = key
        store = store_for(ctx.configurable, ctx.thread_id, ctx.parent_ns, ctx.checkpoint_id)
        return ctx, store, key

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.is_async:
            # an async activity's R is its coroutine: the caller awaits this one
            return cast(R, self._acall(*args, **kwargs))
        ctx, store, key = self._prepare(kwargs)
        with traced("activity.call", activity_attributes(self.name, key)) as span:
            found = store.get(key)
            if not is_missing(found):
                span.set_attribute("langgraph_durable.activity.cached", True)
                return cast(R, found)  # the result stored for this key
            span.set_attribute("langgraph_durable.activity.cached", False)
            wait_stored(ctx, self.name, self.stored_timeout)
            result = self.fn(*args, **kwargs)
            return cast(R, store.put(key, result))

    async def _acall(self, *args: Any, **kwargs: Any) -> Any:
        ctx, store, key = self._prepare(kwargs)
        with traced("activity.call", activity_attributes(self.name, key)) as span:
            found = await store.aget(key)
            if not is_missing(found):
                span.set_attribute("langgraph_durable.activity.cached", True)
                return found
            span.set_attribute("langgraph_durable.activity.cached", False)
            await await_stored(ctx, self.name, self.stored_timeout)
            result = await cast(Awaitable[Any], self.fn(*args, **kwargs))
            return await store.aput(key, result)


def activity(
    fn: Callable[P, R] | None = None,
    *,
    name: str | None = None,
    key_param: str | None = "idempotency_key",
    stored_timeout: float = STORED_TIMEOUT,
) -> Any:
    """Wrap a side-effect function so each graph step calls it at most once.

    Call the result inside a node exactly like ``fn``. It receives
    ``idempotency_key=<key>`` (if it accepts that keyword, or ``**kwargs``),
    and its return value is recorded through the graph's checkpointer; when
    the same step runs again (retry, resume after an interrupt, restart after
    a crash) the recorded value is returned without calling ``fn``. Keys count
    calls in order, so a node must make its activity calls in a deterministic
    order (pass ``idempotency_key=`` yourself to choose a key).

    Before the first call of a key, the activity makes sure the checkpoint
    its step runs from is stored, so that a step restarted after a crash has
    the same key (and the recorded result, or a second call the API
    de-duplicates). Under ``durability="sync"`` it is, before the step
    starts; under LangGraph's default ``"async"`` it is being stored while
    the step runs, and the call waits for it (on our savers, until their put
    returns; on others, reading it back). Under ``"exit"`` checkpoints are
    stored only when the run ends: nothing is waited for, the key holds
    within the run (retries) but not across a crash, and a warning is logged
    once per process. Exactly-once across crashes needs ``"sync"`` or
    ``"async"``.

    In a subgraph, the enclosing graphs' checkpoints are waited for too, and
    the subgraph's own when its level stores checkpoints: our savers know it
    from the read its loop makes when it starts; on others its latest
    checkpoint is read, and a subgraph's first step, whose first checkpoint
    may not be stored yet, is not waited for. A subgraph compiled with
    ``checkpointer=False`` stores none and gets new checkpoint ids on every
    run, so keys inside it hold within the run only; its level is not waited
    for. A functional-API ``@task`` waits for the checkpoint its caller runs
    from.

    On other savers with native async methods, a sync node of an async graph
    (``ainvoke``/``astream``) waits in the event loop's default executor,
    holding one of its workers; a saver that prepares its puts there
    (LangGraph's ``AsyncPostgresSaver`` does, with ``asyncio.to_thread``)
    gets none once as many sync nodes wait as it has workers
    (``min(32, CPUs + 4)``), and they fail with :class:`CheckpointNotStored`
    at ``stored_timeout``, its ``reason`` saying so: use an async node, or
    ``durability="sync"``. Our savers need no worker.

    Works as ``activity(fn)`` and as a decorator (``@activity`` or
    ``@activity(name=...)``); an ``async def`` gives an awaitable activity.
    Results must be values the saver's serde can store (no pickle).

    Args:
        fn: The side-effect function.
        name: Name used in the key (default: ``module.qualname``); set it to
            keep keys stable when code moves.
        key_param: Keyword the key is passed as; ``None`` to not pass it.
        stored_timeout: The longest a first call waits for its step's
            checkpoint to be stored, in seconds (default 30).

    Raises:
        InvalidInput: ``stored_timeout`` is not a positive number of seconds.
        RuntimeError: (when called) outside a graph node.
        CheckpointNotStored: (when called) the step's checkpoint was not
            stored within ``stored_timeout``, or its put failed: ``fn`` was
            not called and nothing was recorded.

    Example:
        ```python
        charge = activity(stripe_charge)      # stripe_charge(amount, *, idempotency_key)

        def charge_card(state):
            receipt = charge(state["amount"])
            return {"charge_id": receipt["id"]}
        ```
    """
    if fn is None:
        return lambda f: Activity(f, name=name, key_param=key_param, stored_timeout=stored_timeout)
    return Activity(fn, name=name, key_param=key_param, stored_timeout=stored_timeout)


def run_once(
    fn: Callable[..., Any],
    *,
    key: str,
    args: list[Any],
    kwargs: dict[str, Any],
    pass_key: bool,
    ctx: TaskContext,
) -> Any:
    """Call ``fn`` under an explicit key with activity semantics (used by undos)."""
    store = store_for(ctx.configurable, ctx.thread_id, ctx.parent_ns, ctx.checkpoint_id)
    found = store.get(key)
    if not is_missing(found):
        return found
    wait_stored(ctx, _name_of(fn), STORED_TIMEOUT)
    call_kwargs = {**kwargs, "idempotency_key": key} if pass_key else dict(kwargs)
    return store.put(key, fn(*args, **call_kwargs))


async def arun_once(
    fn: Callable[..., Any],
    *,
    key: str,
    args: list[Any],
    kwargs: dict[str, Any],
    pass_key: bool,
    ctx: TaskContext,
) -> Any:
    """Async twin of :func:`run_once` (``fn`` may be sync or async)."""
    store = store_for(ctx.configurable, ctx.thread_id, ctx.parent_ns, ctx.checkpoint_id)
    found = await store.aget(key)
    if not is_missing(found):
        return found
    await await_stored(ctx, _name_of(fn), STORED_TIMEOUT)
    call_kwargs = {**kwargs, "idempotency_key": key} if pass_key else dict(kwargs)
    result = fn(*args, **call_kwargs)
    if inspect.isawaitable(result):
        result = await result
    return await store.aput(key, result)


def _name_of(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def accepts_key(fn: Callable[..., Any]) -> bool:
    """``True`` if ``fn`` takes ``idempotency_key=`` (or ``**kwargs``)."""
    return _accepts_kw(fn, "idempotency_key")
