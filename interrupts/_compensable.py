"""``@compensable``: a node that records its undo in the saga log when it completes."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar, cast

from langgraph.types import Command

from langgraph_durable.interrupts._pregel import current_task
from langgraph_durable.interrupts._registry import register_undo
from langgraph_durable.interrupts._saga_state import SAGA_KEY

F = TypeVar("F", bound=Callable[..., Any])

ArgsFn = Callable[[Any, dict[str, Any]], dict[str, Any]]


def _output_of(result: Any) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, dict):
        return result
    if isinstance(result, Command):
        return dict(result._update_as_tuples())
    dump = getattr(result, "model_dump", None)
    return dict(dump()) if callable(dump) else {}


def _plain_state(state: Any) -> Any:
    # the saga log itself is never copied into a step's arguments
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if k != SAGA_KEY}
    return state


def _commit_op(state: Any, result: Any, undo_name: str, args: ArgsFn | None) -> dict[str, Any]:
    ctx = current_task()
    output = {k: v for k, v in _output_of(result).items() if k != SAGA_KEY}
    if args is not None:
        kwargs = args(state, output)
        if not isinstance(kwargs, dict):
            raise TypeError(f"args= of undo {undo_name!r} must return a dict of keyword arguments")
        positional: list[Any] = []
    else:
        positional, kwargs = [_plain_state(state), output], {}
    step_id = ctx.checkpoint_ns if ctx is not None else f"{undo_name}:{id(result)}"
    return {
        "op": "commit",
        "step": {
            "id": step_id,
            "node": ctx.node if ctx is not None else undo_name,
            "undo": undo_name,
            "args": positional,
            "kwargs": kwargs,
            "committed_at": datetime.now(timezone.utc).isoformat(),
        },
    }


def _with_commit(result: Any, op: dict[str, Any]) -> Any:
    if result is None:
        return {SAGA_KEY: op}
    if isinstance(result, dict):
        if SAGA_KEY in result:
            prior = result[SAGA_KEY]
            return {**result, SAGA_KEY: [*(prior if isinstance(prior, list) else [prior]), op]}
        return {**result, SAGA_KEY: op}
    # a Command, a list of them, or a state object: keep it as is and add an update
    items = list(result) if isinstance(result, (list, tuple)) else [result]
    return [*items, Command(update={SAGA_KEY: op})]


def compensable(
    undo: Callable[..., Any] | str,
    *,
    name: str | None = None,
    args: ArgsFn | None = None,
) -> Callable[[F], F]:
    """Mark a node as having a side effect that ``undo`` reverses.

    When the node completes, its undo (by registered name, never pickled) and
    the arguments for it are appended to the saga log in the checkpointed
    state. If a later node raises :class:`Compensate` (or fails after its
    retries), the compensation node that :func:`add_compensation` adds calls
    the undos in reverse order of completion.

    By default the undo is called as ``undo(state, result)``: the node's input
    state and the update it returned. Pass ``args=`` to store only what the
    undo needs (recommended for large states): ``args(state, result)``
    returns a dict of keyword arguments. If ``undo`` accepts
    ``idempotency_key=``, it gets a key that is the same for every attempt
    at undoing this step, so a refund can be de-duplicated by the provider.

    Args:
        undo: The undo function, or the name of one registered with
            :func:`register_undo`.
        name: Name to register ``undo`` under (default: ``module.qualname``).
        args: Builds the undo's keyword arguments from ``(state, result)``;
            the values must be storable by the saver's serde.

    Example:
        ```python
        @compensable(undo=refund_card, args=lambda s, out: {"charge_id": out["charge_id"]})
        def charge_card(state):
            return {"charge_id": charge(state["amount"])["id"]}
        ```
    """
    undo_name = undo if isinstance(undo, str) else register_undo(undo, name=name)

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def awrapper(state: Any, *a: Any, **kw: Any) -> Any:
                result = await fn(state, *a, **kw)
                return _with_commit(result, _commit_op(state, result, undo_name, args))

            wrapper: Any = awrapper
        else:

            @functools.wraps(fn)
            def swrapper(state: Any, *a: Any, **kw: Any) -> Any:
                result = fn(state, *a, **kw)
                return _with_commit(result, _commit_op(state, result, undo_name, args))

            wrapper = swrapper
        wrapper.__compensable_undo__ = undo_name
        return cast(F, wrapper)

    return decorate
