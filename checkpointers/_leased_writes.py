"""The class decorators that put run leases around a saver's own writes."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AsyncExitStack, ExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

from langgraph_durable.checkpointers._multitask import (
    arun_returned,
    root_run,
    run_returned,
    run_start,
    running_loop,
)
from langgraph_durable.checkpointers._writes_in_flight import WritesInFlight

if TYPE_CHECKING:
    from langgraph_durable.checkpointers._async_run_leases import AsyncRunLeases
    from langgraph_durable.checkpointers._run_leases import RunLeases

S = TypeVar("S", bound="type[Any]")


def _in_flight(saver: Any) -> WritesInFlight:
    """The saver's registry of running ``put_writes`` (made on first use)."""
    registry: WritesInFlight | None = saver.__dict__.get("_writes_in_flight")
    if registry is None:
        registry = saver.__dict__.setdefault("_writes_in_flight", WritesInFlight())
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
    """Class decorator: run leases around a sync saver's own ``put``/``put_writes``.

    The saver sets ``self.run_leases`` (a :class:`RunLeases`, or ``None`` to turn
    leases off). A decorator rather than a mixin, because the savers define
    ``put`` in their own class body. ``get_tuple`` admits a run with a
    multitask strategy (:mod:`langgraph_durable.checkpointers._multitask`)
    before it reads.
    """
    get_tuple = cls.get_tuple
    put = cls.put
    put_writes = cls.put_writes

    @functools.wraps(get_tuple)
    def admitting_get_tuple(self: Any, config: RunnableConfig) -> Any:
        leases: RunLeases | None = self.run_leases
        start = run_start(config, leases.multitask if leases else None, leases=leases is not None)
        run = root_run(config) if leases is not None else None
        if run is not None and leases is not None:
            if start is not None:
                leases.admit(*start)
            # the loop's exit tells a pause at a breakpoint, and ends an admitted run
            loop = running_loop(config)
            if loop is not None and isinstance(loop.stack, ExitStack):
                loop.stack.push(run_returned(leases, *run, loop))
        return get_tuple(self, config)

    @functools.wraps(put)
    def leased_put(
        self: Any,
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
        leases: RunLeases | None = self.run_leases
        if leases is None:
            return put(self, config, checkpoint, metadata, new_versions)
        before, after = leases.book.on_put(config, checkpoint, metadata)
        if before.start or after.end is not None:
            return leases.around(
                self,
                "put",
                self._lease_put_op(config, checkpoint, metadata, new_versions),
                before,
                after,
            )
        result = put(self, config, checkpoint, metadata, new_versions)
        leases.after(after)
        return result

    def leased_put_writes_(
        self: Any,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        leases: RunLeases | None = self.run_leases
        if leases is None:
            put_writes(self, config, writes, task_id, task_path)
            return
        before, after = leases.book.on_writes(config, writes)
        if before.start or after.end is not None:
            leases.around(
                self,
                "put_writes",
                self._lease_writes_op(config, writes, task_id, task_path),
                before,
                after,
            )
            return
        put_writes(self, config, writes, task_id, task_path)
        leases.after(after)

    @functools.wraps(put_writes)
    def leased_put_writes(
        self: Any,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        registry, key = _in_flight(self), _step_key(config)
        if key is None:
            leased_put_writes_(self, config, writes, task_id, task_path)
            return
        registry.begin(key)
        try:
            leased_put_writes_(self, config, writes, task_id, task_path)
        finally:
            registry.end(key)

    cls.get_tuple = admitting_get_tuple
    cls.put = leased_put
    cls.put_writes = leased_put_writes
    return cls


def async_run_leases(cls: S) -> S:
    """Class decorator: run leases around an async saver's own ``aput``/``aput_writes``.

    The saver sets ``self.arun_leases`` (an :class:`AsyncRunLeases`, or ``None``)
    and has :class:`~langgraph_durable.checkpointers._audit.DeferredAuditMixin`: entries handed
    over with ``defer_audit`` are written before either write, whatever path
    the write then takes.
    """
    aget_tuple = cls.aget_tuple
    aput = cls.aput
    aput_writes = cls.aput_writes

    @functools.wraps(aget_tuple)
    async def admitting_aget_tuple(self: Any, config: RunnableConfig) -> Any:
        leases: AsyncRunLeases | None = self.arun_leases
        start = run_start(config, leases.multitask if leases else None, leases=leases is not None)
        run = root_run(config) if leases is not None else None
        if run is not None and leases is not None:
            if start is not None:
                await leases.admit(*start)
            loop = running_loop(config)  # see admitting_get_tuple
            if loop is not None and isinstance(loop.stack, AsyncExitStack):
                loop.stack.push_async_exit(arun_returned(leases, *run, loop))
        return await aget_tuple(self, config)

    @functools.wraps(aput)
    async def leased_aput(
        self: Any,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        key = _step_key(config, put=True)
        if key is not None:
            await _in_flight(self).await_settled(key)  # see leased_put
        await self._write_deferred_audit()  # entries a sync helper handed over first
        leases: AsyncRunLeases | None = self.arun_leases
        if leases is None:
            return await aput(self, config, checkpoint, metadata, new_versions)
        before, after = leases.book.on_put(config, checkpoint, metadata)
        if before.start or after.end is not None:
            return await leases.around(
                self,
                "put",
                self._lease_put_op(config, checkpoint, metadata, new_versions),
                before,
                after,
            )
        result = await aput(self, config, checkpoint, metadata, new_versions)
        await leases.after(after)
        return result

    @functools.wraps(aput_writes)
    async def leased_aput_writes(
        self: Any,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        registry, key = _in_flight(self), _step_key(config)
        if key is None:
            await leased_aput_writes_(self, config, writes, task_id, task_path)
            return
        registry.begin(key)  # before the first await: a put started after this waits
        try:
            await leased_aput_writes_(self, config, writes, task_id, task_path)
        finally:
            registry.end(key)

    async def leased_aput_writes_(
        self: Any,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        # before the interrupt they audit (see langgraph_durable.checkpointers.DeferredAudit)
        await self._write_deferred_audit()
        leases: AsyncRunLeases | None = self.arun_leases
        if leases is None:
            await aput_writes(self, config, writes, task_id, task_path)
            return
        before, after = leases.book.on_writes(config, writes)
        if before.start or after.end is not None:
            await leases.around(
                self,
                "put_writes",
                self._lease_writes_op(config, writes, task_id, task_path),
                before,
                after,
            )
            return
        await aput_writes(self, config, writes, task_id, task_path)
        await leases.after(after)

    cls.aget_tuple = admitting_aget_tuple
    cls.aput = leased_aput
    cls.aput_writes = leased_aput_writes
    return cls
