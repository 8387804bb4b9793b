"""What the sync and the async Postgres saver share: their parts and how they are put together.

A saver holds one runner (:mod:`._runner` / :mod:`._runner_async`), one core
(:class:`~._core.PostgresCore`: the statements of its schema and its value
codec) and its feature stores as attributes, each built on that runner and
core: ``waits``, ``decisions``, ``audit``, ``leases``, ``activities``,
``outbox`` and ``migration_store``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers.postgres._core import PostgresCore
from langgraph_durable.checkpointers.postgres._stmt import Op

__all__ = ["PostgresSaverBase", "check_schema"]


class PostgresSaverBase(BaseCheckpointSaver[str]):
    """The parts of a Postgres saver; subclasses name the store classes of their mode."""

    # the store classes of the saver's mode (sync or async), by attribute
    _store_classes: ClassVar[dict[str, type[Any]]]
    _runner: Any
    _core: PostgresCore

    # -- the stores: built on the saver's runner and core, rebuilt with a new serializer --

    def _compose(self) -> None:
        runner, core = self._runner, self._core
        classes = self._store_classes
        self.waits = classes["waits"](runner, core)
        self.decisions = classes["decisions"](runner, core)
        self.leases = classes["leases"](runner, core)
        self.audit = classes["audit"](runner, core, self.leases)
        self.activities = classes["activities"](runner, core)
        self.outbox = classes["outbox"](runner, core)
        self.migration_store = classes["migration_store"](runner, core)

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer of every value the saver and its stores store."""
        return self._core.serde

    @serde.setter
    def serde(self, serde: SerializerProtocol) -> None:
        # with_allowlist sets it on a shallow copy of the saver: the copy gets
        # a core and stores of its own, sharing the runner and the caches
        self._core = self._core.with_serde(serde)
        self._compose()

    @property
    def delta_policy(self) -> DeltaPolicy:
        """When a growing value is stored as a delta (the ``deltas=`` option)."""
        return self._core.delta_policy

    @delta_policy.setter
    def delta_policy(self, policy: DeltaPolicy) -> None:
        self._core.delta_policy = policy

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Next channel version, ``"<counter:032>.<random:016>"`` as the official saver."""
        return self._core.get_next_version(current, channel)

    # -- the writes a run's lease statements ride with (checkpointers/_leased_writes.py) --

    def _lease_put_op(
        self, config: RunnableConfig, checkpoint: Any, metadata: Any, new_versions: Any
    ) -> Op[Any]:
        return self._core._op_put(config, checkpoint, metadata, new_versions)

    def _lease_writes_op(
        self, config: RunnableConfig, writes: Any, task_id: str, task_path: str
    ) -> Op[Any]:
        return self._core._op_put_writes(config, writes, task_id, task_path)


def check_schema(schema: str) -> str:
    """``schema`` if it can name a PostgreSQL schema; else :class:`InvalidConfigError`."""
    if not isinstance(schema, str) or not schema or "\x00" in schema or len(schema) > 63:
        raise InvalidConfigError(field="schema", reason="must be a non-empty name of <= 63 chars")
    return schema
