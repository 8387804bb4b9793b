"""The saga log: what a compensable graph has committed and undone.

The log lives in one reserved state channel, :data:`SAGA_KEY`, whose reducer
folds small *operations* written by the nodes (``commit``, ``fail``,
``undone``...) into one JSON-able dict. Everything in it is plain data (str,
int, lists, dicts and the node's own state values), so every saver stores it
with its msgpack serde, never pickle.

Shape of the folded value::

    {
        "status": "running" | "compensating" | "compensated" | "aborted",
        "reason": "order rejected by the approver",     # why compensation started
        "failure": {"node": ..., "type": ..., "message": ...},  # what failed
        "steps": [                                  # in order of completion
            {"id": ..., "node": ..., "undo": ..., "args": [...], "kwargs": {...},
             "status": "committed" | "compensated" | "skipped" | "failed",
             "attempts": 0, "error": None, "committed_at": ..., "undone_at": ...},
        ],
        "reports": [ {UndoReport as JSON, with the human's decision} ],
    }
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Annotated, Any

from typing_extensions import TypedDict

SAGA_KEY = "saga"
"""Name of the reserved state channel that holds the saga log."""

COMPENSATE_NODE = "__compensate__"
"""Name of the node :func:`langgraph_durable.interrupts.add_compensation` adds."""

RUNNING = "running"
COMPENSATING = "compensating"
COMPENSATED = "compensated"
ABORTED = "aborted"


class Compensate(Exception):
    """Raise inside a node to stop the forward path and undo what was committed.

    Unlike other exceptions it is never retried: it is a decision, not a fault.

    Attributes:
        reason: Why, in words a human will read in the final state and reports.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


_REPR = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)$", re.S)


def _from_repr(text: str, node: str | None) -> dict[str, Any]:
    # LangGraph stores a failed task's error as its repr; a task re-run after a
    # restart (its error handler rescheduled from the checkpoint) sees that string
    match = _REPR.match(text)
    if not match:
        return {"node": node, "type": "Exception", "message": text}
    kind, raw = match.groups()
    args: tuple[Any, ...]
    try:
        args = tuple(ast.literal_eval(f"({raw},)")) if raw else ()
    except (ValueError, SyntaxError):
        args = (raw,)
    message = str(args[0]) if len(args) == 1 else str(args) if args else ""
    return {"node": node, "type": kind, "message": message}


def error_info(exc: BaseException | str, node: str | None = None) -> dict[str, Any]:
    """The JSON-able description of an exception: type and message, no traceback."""
    if isinstance(exc, str):
        return _from_repr(exc, node)
    cls = type(exc)
    module = cls.__module__
    name = cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
    return {"node": node, "type": name, "message": str(exc)}


def empty_saga() -> dict[str, Any]:
    """A fresh log: nothing committed, the forward path running."""
    return {
        "status": RUNNING,
        "reason": None,
        "failure": None,
        "steps": [],
        "reports": [],
    }


def _apply(saga: dict[str, Any], op: dict[str, Any]) -> None:
    kind = op.get("op")
    steps: list[dict[str, Any]] = saga["steps"]
    if kind == "commit":
        step = dict(op["step"])
        # a step re-recorded (e.g. a replayed superstep) must not be undone twice
        if not any(s["id"] == step["id"] for s in steps):
            step.setdefault("status", "committed")
            step.setdefault("attempts", 0)
            step.setdefault("error", None)
            steps.append(step)
    elif kind == "fail":
        # the first failure decides the reason; later ones (parallel branches)
        # are kept for the report but do not restart anything
        if saga["status"] == RUNNING:
            saga["status"] = COMPENSATING
            saga["reason"] = op.get("reason")
            saga["failure"] = op.get("failure")
        else:
            saga.setdefault("other_failures", []).append(op.get("failure"))
    elif kind == "step":
        for s in steps:
            if s["id"] == op["id"]:
                s.update(op["fields"])
    elif kind == "report":
        saga["reports"].append(op["report"])
    elif kind == "decide":
        if saga["reports"]:
            saga["reports"][-1].update(op["fields"])
    elif kind == "finish":
        saga["status"] = op["status"]
    else:
        raise ValueError(f"unknown saga operation {kind!r}")


def saga_reducer(current: dict[str, Any] | None, update: Any) -> dict[str, Any]:
    """Fold ``update`` (one operation, a list of them, ``None``, or a whole log).

    ``None`` resets the log (a thread that starts a new saga); a dict without
    ``"op"`` replaces it (graph input, ``update_state``).
    """
    if update is None:
        return empty_saga()
    base = current if current else empty_saga()
    if isinstance(update, dict) and "op" not in update:
        return {**empty_saga(), **copy.deepcopy(update)}
    ops = update if isinstance(update, list) else [update]
    saga = copy.deepcopy(base)
    for op in ops:
        _apply(saga, op)
    return saga


class SagaState(TypedDict, total=False):
    """Mix into a TypedDict state to read the saga log as a typed key.

    :func:`langgraph_durable.interrupts.add_compensation` adds the channel on its own; mixing
    this in only makes :data:`SAGA_KEY` part of the graph's declared output,
    so ``graph.invoke(...)`` returns it.
    """

    saga: Annotated[dict[str, Any], saga_reducer]


def saga_of(values: Any) -> dict[str, Any]:
    """The saga log in a state (dict or object), or an empty log."""
    raw = values.get(SAGA_KEY) if isinstance(values, dict) else getattr(values, SAGA_KEY, None)
    return raw if isinstance(raw, dict) and raw else empty_saga()
