"""What the sync and the async Postgres saver share: their parts and how they are put together.

A saver holds one runner (:mod:`._runner` / :mod:`._runner_async`), one core
(:class:`~._core.PostgresCore`: the statements of its schema and its value
codec) and its feature stores as attributes, each built on that runner and
core: ``waits``, ``decisions``, ``audit``, ``leases``, ``activities``,
``outbox`` and ``migration_store``.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers.postgres._core import PostgresCore

__all__ = ["PostgresSaverBase", "check_schema"]


class PostgresSaverBase(BaseCheckpointSaver[str]):
    """The parts of a Postgres saver; the saver of each mode makes its stores."""

    _runner: Any
    core: PostgresCore
    """The statements of the saver's schema and its value codec."""

    def _compose(self) -> None:
        """Make the feature stores on the saver's runner and core (again with a new serializer)."""
        raise NotImplementedError

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer of every value the saver and its stores store."""
        return self.core.serde

    @serde.setter
    def serde(self, serde: SerializerProtocol) -> None:
        # with_allowlist sets it on a shallow copy of the saver: the copy gets
        # a core and stores of its own, sharing the runner and the caches
        self.core = self.core.with_serde(serde)
        self._compose()

    @property
    def delta_policy(self) -> DeltaPolicy:
        """When a growing value is stored as a delta (the ``deltas=`` option)."""
        return self.core.delta_policy

    @delta_policy.setter
    def delta_policy(self, policy: DeltaPolicy) -> None:
        self.core.delta_policy = policy

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Next channel version, ``"<counter:032>.<random:016>"`` as the official saver."""
        return self.core.get_next_version(current, channel)


def check_schema(schema: str) -> str:
    """``schema`` if it can name a PostgreSQL schema; else :class:`InvalidConfigError`."""
    if not isinstance(schema, str) or not schema or "\x00" in schema or len(schema) > 63:
        raise InvalidConfigError(field="schema", reason="must be a non-empty name of <= 63 chars")
    return schema
