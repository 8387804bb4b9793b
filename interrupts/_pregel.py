"""The few LangGraph runtime internals the helpers read, in one place.

A node's config carries what an activity needs to know where it runs (thread,
task namespace, the checkpoint the task runs from, the saver, the per-attempt
scratchpad). LangGraph exposes these under private config keys; reading them
here, and only here, keeps an upgrade of LangGraph a one-file change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import (
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_DURABILITY,
    CONFIG_KEY_READ,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    ERROR,
    ERROR_SOURCE_NODE,
    INTERRUPT,
    NS_SEP,
    NULL_TASK_ID,
    RESUME,
)
from langgraph.config import get_config
from xxhash import xxh3_128_hexdigest

try:
    from langgraph.types import _interrupt_id
except ImportError:  # langgraph releases before per-answer interrupt ids

    def _interrupt_id(ns: str, answered: int) -> str:
        # they give every interrupt of a task the hash of its namespace
        return xxh3_128_hexdigest(ns.encode())


__all__ = [
    "CONFIG_KEY_CHECKPOINTER",
    "CONTROL_WRITES",
    "INTERRUPT",
    "NULL_TASK_ID",
    "ResumeSlot",
    "TaskContext",
    "current_task",
    "read_channel",
    "resume_slot",
    "run_saver",
]

CONTROL_WRITES = frozenset((ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME))
"""Writes that say what happened to a task, not what it produced: a task with any
other write finished (LangGraph's rule for which interrupts still wait)."""


@dataclass(frozen=True)
class TaskContext:
    """Where the calling code runs: one attempt of one task of one thread.

    Attributes:
        thread_id: The thread (``None`` without a checkpointer).
        checkpoint_ns: The task's namespace (``node:task_id``, nested with ``|``),
            the same on every re-execution of the same step.
        node: The node name.
        task_id: LangGraph's task id.
        parent_ns: Namespace of the graph that runs the task.
        checkpoint_id: The checkpoint the task runs from.
        attempt_token: An object unique to this attempt (a retry or a
            re-execution gets a new one).
        configurable: The raw ``configurable`` mapping.
        durability: The run's ``durability`` (``"sync"``, ``"async"``, LangGraph's
            default, or ``"exit"``).
        checkpoints: ``(namespace, checkpoint id)`` of the checkpoint the task
            runs from and, in a subgraph, of each enclosing graph's, outermost
            first: the task id (so ``checkpoint_ns``) is derived from them.
            Each checkpoint once, under the namespace it is stored in.
    """

    thread_id: str | None
    checkpoint_ns: str
    node: str
    task_id: str | None
    parent_ns: str
    checkpoint_id: str | None
    attempt_token: Any
    configurable: dict[str, Any]
    durability: str = "async"
    checkpoints: tuple[tuple[str, str], ...] = ()


def current_task(config: RunnableConfig | None = None) -> TaskContext | None:
    """The :class:`TaskContext` of the calling node, or ``None`` outside a graph."""
    if config is None:
        try:
            config = get_config()
        except RuntimeError:
            return None
    conf: dict[str, Any] = dict(config.get("configurable") or {})
    ns = str(conf.get("checkpoint_ns") or "")
    if not ns or CONFIG_KEY_SCRATCHPAD not in conf:
        return None
    metadata = config.get("metadata") or {}
    last = ns.split(NS_SEP)[-1]
    node = str(metadata.get("langgraph_node") or last.split(":")[0])
    parent_ns = ns.rsplit(NS_SEP, 1)[0] if NS_SEP in ns else ""
    checkpoint_map = conf.get(CONFIG_KEY_CHECKPOINT_MAP) or {}
    thread_id = conf.get("thread_id")
    return TaskContext(
        thread_id=None if thread_id is None else str(thread_id),
        checkpoint_ns=ns,
        node=node,
        task_id=conf.get(CONFIG_KEY_TASK_ID),
        parent_ns=parent_ns,
        checkpoint_id=checkpoint_map.get(parent_ns),
        attempt_token=conf.get(CONFIG_KEY_SCRATCHPAD),
        configurable=conf,
        # absent unless the run or a parent graph set it: LangGraph then runs "async"
        durability=str(conf.get(CONFIG_KEY_DURABILITY) or "async"),
        checkpoints=_stored_levels(checkpoint_map),
    )


def _stored_levels(checkpoint_map: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``(namespace, id)`` of each checkpoint in the map, once, outermost first.

    A functional-API ``@task`` finds its caller's namespace mapped to the id of
    the checkpoint its caller runs from: checkpoint ids are unique, and a
    checkpoint is stored under the shallowest namespace that maps to its id.
    """
    levels = [(str(ns), str(cid)) for ns, cid in checkpoint_map.items() if cid]
    where: dict[str, str] = {}
    for ns, cid in levels:
        if cid not in where or len(ns) < len(where[cid]):
            where[cid] = ns
    return tuple((ns, cid) for ns, cid in levels if where[cid] == ns)


def read_channel(config: RunnableConfig, channel: str, *, fresh: bool) -> Any:
    """Read one state channel from inside a task (``fresh``: with the task's own writes)."""
    read = (config.get("configurable") or {}).get(CONFIG_KEY_READ)
    if read is None:
        return None
    try:
        return read(channel, fresh)
    except KeyError:
        return None


@dataclass(frozen=True)
class ResumeSlot:
    """Where a resume value sits among the calling task's answers.

    LangGraph keeps a task's answers in a list, one per ``interrupt()`` call in
    call order, and stores that list with the task's writes: so an answer left
    in place is replayed to the node every time it re-runs, and an answer the
    node refuses must be taken out, or the refused value would answer the
    interrupt for good.

    Attributes:
        index: The answer's position in the task's list.
        interrupt_id: The id of the interrupt it answers.
    """

    index: int
    interrupt_id: str
    _config: Any = None

    def replace(self, value: Any) -> None:
        """Keep ``value`` as this answer from now on (what a re-run node gets back)."""
        conf = self._config["configurable"]
        answers = conf[CONFIG_KEY_SCRATCHPAD].resume
        answers[self.index] = value
        conf[CONFIG_KEY_SEND]([(RESUME, list(answers))])

    def withdraw(self) -> None:
        """Drop this answer (and any after it): the interrupt waits for the next resume."""
        conf = self._config["configurable"]
        answers = conf[CONFIG_KEY_SCRATCHPAD].resume
        del answers[self.index :]
        conf[CONFIG_KEY_SEND]([(RESUME, list(answers))])


def resume_slot(config: RunnableConfig, value: Any) -> ResumeSlot | None:
    """The slot of ``value``, which ``interrupt()`` just returned to the calling node."""
    conf = config.get("configurable") or {}
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    answers = getattr(scratchpad, "resume", None)
    if not isinstance(answers, list):
        return None
    for index in range(len(answers) - 1, -1, -1):
        if answers[index] is value:
            ns = str(conf.get(CONFIG_KEY_CHECKPOINT_NS) or "")
            return ResumeSlot(index, _interrupt_id(ns, index), config)
    return None


def saga_wired(config: RunnableConfig | None = None) -> bool:
    """Inside a node: whether the graph keeps a saga log (``add_compensation``)."""
    from langgraph_durable.interrupts._saga_state import SAGA_KEY

    if config is None:
        try:
            config = get_config()
        except RuntimeError:
            return False
    read = (config.get("configurable") or {}).get(CONFIG_KEY_READ)
    if read is None:
        return False
    try:
        read(SAGA_KEY, False)
    except KeyError:
        return False
    except Exception:  # an empty channel: the saga log exists, nothing folded yet
        return True
    return True


def run_saver(configurable: dict[str, Any]) -> Any:
    """The saver a node's run writes to, or ``None``.

    Agent Server hands nodes its adapter around a custom checkpointer (it
    forwards unknown attributes to the saver it wraps but answers the sync
    ``BaseCheckpointSaver`` calls with ``NotImplementedError``); the wrapped
    saver is what storage calls from a node must reach.
    """
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
    inner = getattr(type(saver), "__getattr__", None) and saver.__dict__.get("_inner")
    return inner if inner is not None and hasattr(inner, "get_tuple") else saver
