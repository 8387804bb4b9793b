# Generated from checkpointers/_leased_writes_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The class decorator that puts run leases around a saver's own writes.

Written once as async code; the sync savers' decorator is generated from it by
``tools/async_to_sync.py``. The wrappers reach what they need through the
parts the saver is composed of (:class:`LeasedSaver`): its run-lease
driver, its core, which makes the operation of each write, and, on an async
saver, its audit store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

from langgraph_durable.checkpointers._multitask import (
    root_run,
    run_start,
    running_loop,
)
from langgraph_durable.checkpointers._puts_in_flight import PutsInFlight
from langgraph_durable.checkpointers._writes_in_flight import WritesInFlight

if TYPE_CHECKING:
    from langgraph_durable.checkpointers._run_leases import RunLeases

__all__ = ["LeasedSaver", "SaverWrites", "sync_run_leases"]

S = TypeVar("S", bound="type[Any]")
F = Callable[..., Any]


class SaverWrites(Protocol):
    """A saver core's two writes as operations, which a run's lease statements can join."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        """The operation that stores a checkpoint."""
        ...

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Any:
        """The operation that stores a task's writes."""
        ...


class LeasedSaver(Protocol):
    """What :func:`sync_run_leases` needs of a saver: parts it is composed of."""

    @property
    def run_leases(self) -> RunLeases | None:
        """The run-lease driver, or ``None`` when leases are off."""
        ...

    @property
    def core(self) -> SaverWrites:
        """The core that makes the writes' operations."""
        ...


def _in_flight(saver: Any) -> WritesInFlight:
    """The saver's registry of running ``put_writes`` (made on first use)."""
    registry: WritesInFlight | None = saver.__dict__.get("_writes_in_flight")
    if registry is None:
        registry = saver.__dict__.setdefault("_writes_in_flight", WritesInFlight())
    return registry


def _puts(saver: Any) -> PutsInFlight:
    """The saver's registry of how its last ``put`` calls ended (made on first use)."""
    registry: PutsInFlight | None = saver.__dict__.get("_puts_in_flight")
    if registry is None:
        registry = saver.__dict__.setdefault("_puts_in_flight", PutsInFlight())
    return registry


# LangGraph's key for a run's durability in the configurable of the calls it makes
_DURABILITY = "__pregel_durability"


def _step_key(config: RunnableConfig, *, put: bool = False) -> tuple[Any, Any, Any] | None:
    """(thread, namespace, checkpoint): what a step's writes and the next put share.

    None where nothing is waited for: a put of a ``durability="sync"`` run (the
    wait would add a round trip to each of its steps), or ids that are not
    hashable (the saver's own checks then name what is wrong).
    """
    conf = config.get("configurable") or {}
    if put and conf.get(_DURABILITY) == "sync":
        return None
    key = (conf.get("thread_id"), conf.get("checkpoint_ns") or "", conf.get("checkpoint_id"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def sync_run_leases(cls: S) -> S:
    """Class decorator: run leases around a saver's own ``put``/``put_writes``.

    The saver sets ``self.run_leases`` (an :class:`RunLeases`, or ``None``
    to turn leases off) and offers the parts :class:`LeasedSaver` names.
    A decorator rather than a mixin, because the savers define ``put`` in
    their own class body. ``get_tuple`` admits a run with a multitask
    strategy (:mod:`langgraph_durable.checkpointers._multitask`) before it
    reads. On an async saver, the entries its audit store took with
    ``defer_audit`` are written before either write, whatever path it takes.
    How each ``put`` ended is kept in ``saver.checkpoint_puts``
    (:class:`~langgraph_durable.checkpointers.CheckpointPuts`), for activities
    that wait until their step's checkpoint is stored.
    """
    cls.get_tuple = _admitting(cls.get_tuple)
    cls.put = _settled_put(_leased_put(cls.put))
    cls.checkpoint_puts = property(_puts)
    cls.put_writes = _in_flight_writes(_leased_put_writes(cls.put_writes))
    return cls


def _admitting(get_tuple: F) -> F:
    @functools.wraps(get_tuple)
    def admitting(self: LeasedSaver, config: RunnableConfig) -> Any:
        leases = self.run_leases
        start = run_start(config, leases.multitask if leases else None, leases=leases is not None)
        run = root_run(config) if leases is not None else None
        if run is not None and leases is not None:
            if start is not None:
                leases.admit(*start)
            # the loop's exit tells a pause at a breakpoint, and ends an admitted run
            loop = running_loop(config)
            if loop is not None and isinstance(loop.stack, ExitStack):
                loop.stack.push(leases.returned(*run, loop))
        found = get_tuple(self, config)
        _puts(self).read(config, found)  # an activity of a step run from it need not read it
        return found

    return admitting


def _leased_put(put: F) -> F:
    @functools.wraps(put)
    def leased_put(
        self: LeasedSaver,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        # the parent's writes still being stored: let them land, so the delta
        # refers to them (see checkpointers/_writes_in_flight.py)
        key = _step_key(config, put=True)
        if key is not None:
            _in_flight(self).wait(key)
        leases = self.run_leases
        if leases is None:
            return put(self, config, checkpoint, metadata, new_versions)
        before, after = leases.book.on_put(config, checkpoint, metadata)
        if before.start or after.end is not None:
            op = self.core.put(config, checkpoint, metadata, new_versions)
            return leases.around(self, "put", op, before, after)
        result = put(self, config, checkpoint, metadata, new_versions)
        leases.after(after)
        return result

    return leased_put


def _settled_put(put: F) -> F:
    """``put`` whose end (stored, or the exception) is kept in ``saver.checkpoint_puts``."""

    @functools.wraps(put)
    def settled_put(
        self: Any,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        try:
            result = put(self, config, checkpoint, metadata, new_versions)
        except BaseException as error:
            _puts(self).settle(_put_key(config, checkpoint), error)
            raise
        _puts(self).settle(_put_key(config, checkpoint))
        return result

    return settled_put


def _put_key(config: RunnableConfig, checkpoint: Checkpoint) -> tuple[str, str, str]:
    conf = config.get("configurable") or {}
    return (
        str(conf.get("thread_id")),
        str(conf.get("checkpoint_ns") or ""),
        str(checkpoint.get("id")),
    )


def _leased_put_writes(put_writes: F) -> F:
    @functools.wraps(put_writes)
    def leased_put_writes(
        self: LeasedSaver,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        # before the interrupt they audit (see langgraph_durable.checkpointers.DeferredAudit)
        leases = self.run_leases
        if leases is None:
            put_writes(self, config, writes, task_id, task_path)
            return
        before, after = leases.book.on_writes(config, writes)
        if before.start or after.end is not None:
            op = self.core.put_writes(config, writes, task_id, task_path)
            leases.around(self, "put_writes", op, before, after)
            return
        put_writes(self, config, writes, task_id, task_path)
        leases.after(after)

    return leased_put_writes


def _in_flight_writes(put_writes: F) -> F:
    """``put_writes`` registered in flight while it runs, for the next put to wait on."""

    @functools.wraps(put_writes)
    def registered(
        self: Any,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        registry, key = _in_flight(self), _step_key(config)
        if key is None:
            put_writes(self, config, writes, task_id, task_path)
            return
        registry.begin(key)  # before the first await: a put started after this waits
        try:
            put_writes(self, config, writes, task_id, task_path)
        finally:
            registry.end(key)

    return registered
