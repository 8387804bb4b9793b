"""``add_compensation``: wire a StateGraph builder for sagas.

What it does to the builder (before ``compile``):

* adds the reserved :data:`SAGA_KEY` channel (and to the graph's output, so
  ``invoke`` returns the saga log) and the :data:`COMPENSATE_NODE` node;
* installs a default node error handler (LangGraph runs it only once a node's
  own retry policy gave up): it records the failure and routes to the
  compensation node. Nodes with their own ``error_handler`` keep it;
* wraps each node so that ``raise Compensate(reason)`` records the reason and
  routes to the compensation node without being retried, and so that once
  compensation has started no forward node runs any more (a parallel branch
  that was already scheduled becomes a no-op);
* turns static edges into conditional ones and guards conditional edges, so
  that routing stops once compensation has started.

The compensation node undoes one step per superstep (so each undo's outcome
is checkpointed before the next starts), loops on itself, and ends the run
with the saga log saying ``compensated`` (or ``aborted``) and why.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, get_type_hints

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.constants import END, START
from langgraph.errors import NodeError
from langgraph.graph import StateGraph
from langgraph.graph._branch import BranchSpec
from langgraph.pregel import Pregel
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_durable.interrupts._compensator import (
    Backoff,
    Compensator,
    _utcnow,
    default_asleep,
    default_sleep,
)
from langgraph_durable.interrupts._pregel import read_channel
from langgraph_durable.interrupts._saga_state import (
    COMPENSATE_NODE,
    RUNNING,
    SAGA_KEY,
    Compensate,
    error_info,
    saga_reducer,
)

_GUARD = "__saga_guard__"


class _SagaInput(TypedDict, total=False):
    saga: Annotated[dict[str, Any], saga_reducer]


def fail_op(exc: BaseException | str, node: str) -> dict[str, Any]:
    """The saga operation that starts compensation because ``node`` raised ``exc``."""
    info = error_info(exc, node=node)
    reason = exc.reason if isinstance(exc, Compensate) else f"{info['type']}: {info['message']}"
    return {"op": "fail", "reason": reason, "failure": info}


def compensate_command(reason: str, *, node: str | None = None) -> Command[Any]:
    """What a node returns to start compensation without raising.

    ``return compensate_command("rejected")`` is the same as
    ``raise Compensate("rejected")`` (helpers that cannot raise, such as an
    approval rejected with ``on_reject="compensate"``, use this).
    """
    return Command(update={SAGA_KEY: fail_op(Compensate(reason), node or "")}, goto=COMPENSATE_NODE)


def _running(config: RunnableConfig, *, fresh: bool) -> bool:
    saga = read_channel(config, SAGA_KEY, fresh=fresh)
    return not isinstance(saga, dict) or saga.get("status", RUNNING) == RUNNING


def _node_name(config: RunnableConfig, fallback: str) -> str:
    return str((config.get("metadata") or {}).get("langgraph_node") or fallback)


def _compensating(exc: Compensate, config: RunnableConfig, name: str) -> Command[Any]:
    """The command that starts compensation because the node ``name`` raised ``exc``."""
    return Command(update={SAGA_KEY: fail_op(exc, _node_name(config, name))}, goto=COMPENSATE_NODE)


def _guard_node(name: str, inner: Runnable[Any, Any]) -> Runnable[Any, Any]:
    # RunnableLambda runs run() under invoke and arun() under ainvoke
    def run(state: Any, config: RunnableConfig) -> Any:
        if not _running(config, fresh=False):
            return None
        try:
            return inner.invoke(state, config)
        except Compensate as exc:
            return _compensating(exc, config, name)

    async def arun(state: Any, config: RunnableConfig) -> Any:
        if not _running(config, fresh=False):
            return None
        try:
            return await inner.ainvoke(state, config)
        except Compensate as exc:
            return _compensating(exc, config, name)

    return RunnableLambda(run, afunc=arun, name=name)


def _guard_path(path: Runnable[Any, Any]) -> Runnable[Any, Any]:
    def route(value: Any, config: RunnableConfig) -> Any:
        return path.invoke(value, config) if _running(config, fresh=True) else []

    async def aroute(value: Any, config: RunnableConfig) -> Any:
        return (await path.ainvoke(value, config)) if _running(config, fresh=True) else []

    return RunnableLambda(route, afunc=aroute)


def _static_path(targets: list[str]) -> Runnable[Any, Any]:
    def route(value: Any, config: RunnableConfig) -> Any:
        return list(targets) if _running(config, fresh=True) else []

    return RunnableLambda(route)


# LangGraph's runner remembers the errors it routed to an error handler by
# ``id(exception)`` for the rest of the run, and does not re-raise an exception
# whose id is in that set. Once a handled error is freed, a later
# ``GraphInterrupt`` of the same run can get the same id: the runner then
# swallows the interrupt and the run goes on as if the interrupted node had
# finished (seen: the compensation paused for a human and the run wrote one more
# checkpoint with nothing pending, so the answer was never applied). Keeping the
# handled errors alive keeps their ids unique for as long as a run can last.
_HANDLED_ERRORS: deque[BaseException] = deque(maxlen=4096)
_HANDLED_LOCK = threading.Lock()


def _keep_alive(exc: BaseException) -> None:
    with _HANDLED_LOCK:
        _HANDLED_ERRORS.append(exc)


def _on_node_error(state: Any, error: NodeError) -> Any:
    _keep_alive(error.error)
    if error.node == COMPENSATE_NODE:
        # a fault of the compensation itself (saver down...): fail the run, a
        # later invoke resumes from the last checkpointed undo
        raise error.error
    return Command(update={SAGA_KEY: fail_op(error.error, error.node)}, goto=COMPENSATE_NODE)


def _add_saga_to_output(builder: StateGraph[Any, Any, Any, Any]) -> None:
    old = builder.output_schema
    channels = builder.schemas.get(old, {})
    if SAGA_KEY in channels or "__root__" in channels:
        return
    try:
        hints = get_type_hints(old, include_extras=True)
    except Exception:
        hints = {}
    fields = {k: hints.get(k, Any) for k in channels}
    fields[SAGA_KEY] = Annotated[dict[str, Any], saga_reducer]
    name = f"{getattr(old, '__name__', 'Output')}WithSaga"
    # a TypedDict made at run time from the graph's own output schema: mypy takes
    # only TypedDicts written out literally
    new = TypedDict(name, fields, total=False)  # type: ignore[misc]
    builder.schemas[new] = {**channels, SAGA_KEY: builder.channels[SAGA_KEY]}
    builder.output_schema = new


def _guard_nodes(builder: StateGraph[Any, Any, Any, Any]) -> None:
    """Guard every forward node: it does nothing once the saga stops going forward,
    and a :class:`Compensate` it raises goes to the compensation node."""
    forward = [n for n, spec in builder.nodes.items() if not spec.is_error_handler]
    # a compiled subgraph stays unwrapped: LangGraph must see it to give it its
    # own checkpoint namespace
    for name in forward:
        spec = builder.nodes[name]
        if not isinstance(spec.runnable, Pregel):
            # LangGraph types a node spec's runnable as a StateNode callable; it runs
            # any Runnable there, which is what the guard is
            spec.runnable = _guard_node(name, spec.runnable)  # type: ignore[arg-type]


def _guard_edges(builder: StateGraph[Any, Any, Any, Any]) -> None:
    """Guard every edge after START: once the saga stops going forward, none is taken."""
    # static edges become guarded conditional edges
    targets: dict[str, list[str]] = defaultdict(list)
    for start, end in sorted(builder.edges):
        if start != START:
            targets[start].append(end)
    builder.edges = {(s, e) for s, e in builder.edges if s == START}
    for start, ends in targets.items():
        builder.branches[start][_GUARD] = BranchSpec(
            path=_static_path(ends), ends={e: e for e in ends}
        )
    for start, branches in builder.branches.items():
        if start == START:
            continue
        for key, branch in list(branches.items()):
            if key != _GUARD:
                branches[key] = branch._replace(path=_guard_path(branch.path))


def add_compensation(
    builder: StateGraph[Any, Any, Any, Any],
    max_attempts: int = 3,
    *,
    backoff: Backoff | None = None,
    sleep: Callable[[float], None] = default_sleep,
    asleep: Callable[[float], Awaitable[None]] = default_asleep,
    clock: Callable[[], datetime] = _utcnow,
) -> StateGraph[Any, Any, Any, Any]:
    """Wire ``builder`` so failures undo the committed :func:`compensable` steps.

    Call it after adding every node and edge, right before ``compile``. When
    a node raises :class:`Compensate`, or any exception that survives its
    retry policy, the forward path stops and the compensation node runs the
    recorded undos in reverse order of completion, one per superstep. A
    failing undo is retried with backoff up to ``max_attempts`` times; then
    the thread pauses on an interrupt whose value is a
    :class:`UndoReport`, answered with :func:`resume_undo`
    (``"retry"``, ``"skip"`` or ``"abort"``). The final state's
    ``saga`` key says ``compensated`` (or ``aborted``), why, every step's
    outcome and every report with its decision.

    Args:
        builder: The graph builder (modified in place and returned).
        max_attempts: Attempts per undo before a human is asked.
        backoff: Delays between attempts (default 0.5 s doubling, max 30 s).
        sleep: Sync sleep between attempts (inject a fake clock in tests).
        asleep: Async sleep between attempts.
        clock: Current UTC time for the log and reports.

    Returns:
        The same builder.

    Raises:
        ValueError: compensation was already added, a node default error
            handler is already set, or ``max_attempts < 1``.
    """
    if COMPENSATE_NODE in builder.nodes:
        raise ValueError("add_compensation was already applied to this builder")
    if builder._node_defaults.error_handler is not None:
        raise ValueError(
            "the builder has a default error_handler: add_compensation installs its own "
            "(set per-node error handlers instead, they take precedence)"
        )
    compensator = Compensator(
        max_attempts=max_attempts,
        backoff=backoff or Backoff(),
        sleep=sleep,
        asleep=asleep,
        clock=clock,
    )
    _guard_nodes(builder)
    _guard_edges(builder)
    builder.add_node(
        COMPENSATE_NODE,
        RunnableLambda(compensator.run, afunc=compensator.arun, name=COMPENSATE_NODE),
        input_schema=_SagaInput,
        destinations=(COMPENSATE_NODE, END),
    )
    # LangGraph calls an error handler with (state, NodeError); its type says StateNode
    builder.set_node_defaults(error_handler=_on_node_error)  # type: ignore[arg-type]
    _add_saga_to_output(builder)
    return builder


__all__ = ["add_compensation", "compensate_command", "fail_op"]
