# Generated from checkpointers/redis/_lease_store_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Run leases on Redis: ``saver.leases``.

Its methods run the I/O-free lease commands of :mod:`._lease_commands` on the
saver's runner. Written once as async code; the sync store is generated from
it by ``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._lease_commands import Flow, RedisLeaseCore, with_lease
from langgraph_durable.checkpointers.redis._runner import RedisRunner


class RedisLeases:
    """Run leases, cluster-safe (layout: :mod:`._lease_commands`): ``LeaseStore``.

    Args:
        runner: The saver's runner.
        core: The saver's core (its key prefix and TTL).
    """

    def __init__(self, runner: RedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self.commands = RedisLeaseCore(core.keys.prefix, core.ttl_ms)
        """The I/O-free lease commands (the saver sends some with a run's writes)."""

    def run_with_lease(
        self, operation: str, op: Flow[Any], pre: Step | None, post: Step | None
    ) -> tuple[Any, Any, Any]:
        """Run a write with a run's lease commands, in one pipeline (``RunLeases.around``)."""
        return self._runner.run(operation, with_lease(self.commands, op, pre, post))

    def acquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.acquire_lease`."""
        op = self.commands.acquire(thread_id, owner, now, ttl)
        return self._runner.run("acquire_lease", op)

    def renew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.renew_leases`."""
        op = self.commands.renew(owner, thread_ids, now, ttl, progress)
        return self._runner.run("renew_leases", op)

    def release_lease(
        self, *, thread_id: str, owner: str, now: datetime, reason: str, error: str | None = None
    ) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.release_lease`."""
        op = self.commands.release(thread_id, owner, now, reason, error)
        return self._runner.run("release_lease", op)

    def record_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.record_lease_error`."""
        op = self.commands.record_error(thread_id, owner, error)
        self._runner.run("record_lease_error", op)

    def find_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.find_expired_leases`."""
        return self._runner.run("find_expired_leases", self.commands.find_expired(now, limit))

    def claim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.claim_expired_lease`."""
        op = self.commands.claim(thread_id, token, owner, now, ttl)
        return self._runner.run("claim_expired_lease", op)

    def take_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.take_over_lease`."""
        op = self.commands.take_over(thread_id, token, renewed_at, owner, now, ttl)
        return self._runner.run("take_over_lease", op)

    def park_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.park_lease`."""
        op = self.commands.park(thread_id, token, now, reason)
        return self._runner.run("park_lease", op)

    def unpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.unpark_lease`."""
        return self._runner.run("unpark_lease", self.commands.unpark(thread_id, retry_at))

    def get_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.get_lease`."""
        return self._runner.run("get_lease", self.commands.get(thread_id))

    def list_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.list_leases`."""
        return self._runner.run("list_leases", self.commands.list(state, limit))

    def lease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.lease_counts`."""
        return self._runner.run("lease_counts", self.commands.counts(now))

    def delete_lease(self, *, thread_id: str) -> None:
        """See :meth:`langgraph_durable.checkpointers.LeaseStore.delete_lease`."""
        self._runner.run("delete_lease", self.commands.delete(thread_id))
