"""The bulk runner :func:`aupgrade_all` and the store protocol a saver implements for it.

Written once as async code; the sync runner and protocol are generated from it
(``tools/async_to_sync.py``). What the runner reports and its I/O-free steps
are in :mod:`._bulk_core`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.migrations._bulk_core import (
    PASS_PAUSE,
    BatchOutcome,
    Progress,
    UpgradeFn,
    UpgradeResult,
    VersionStatus,
    absorb,
    check_args,
    require,
    sample_findings,
    upgrader,
)
from langgraph_durable.migrations._chain import StateMigrations


@runtime_checkable
class AsyncMigrationStore(Protocol):
    """What a saver implements so :func:`aupgrade_all` can drive it."""

    async def amigration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """Count the candidates per stored version: checkpoints with a version below ``below``.

        Latest-only (``all_history=False``) counts only the newest checkpoint of
        each ``(thread_id, checkpoint_ns)``.
        """
        ...

    async def amigration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """Read up to ``limit`` candidates stored with ``version``, without claiming."""
        ...

    async def amigration_upgrade_batch(
        self,
        *,
        below: int,
        all_history: bool,
        cursor: Any,
        limit: int,
        upgrade: UpgradeFn,
    ) -> BatchOutcome:
        """Claim and rewrite up to ``limit`` candidates after ``cursor``, in key order.

        For each claimed checkpoint: re-check under the claim that it is still
        behind (another worker may have done it), call ``upgrade(tuple,
        stored_version)``, and store the result atomically (checkpoint, metadata,
        ``schema_version``, the values of ``Upgrade.new_versions``, the pending
        writes). If ``upgrade`` raises, or the write fails, leave the checkpoint
        as stored and report the error in its :class:`ItemOutcome`.
        """
        ...

    async def amigration_status(self) -> list[VersionStatus]:
        """Per schema version: threads, checkpoints, and threads paused at an interrupt."""
        ...


async def aupgrade_all(
    saver: Any,
    m: StateMigrations,
    *,
    dry_run: bool = False,
    batch_size: int = 500,
    all_history: bool = False,
    progress: Callable[[Progress], None] | None = None,
    sample_size: int = 20,
    claim_wait: float = 60.0,
) -> UpgradeResult:
    """Upgrade every stored checkpoint that is behind ``m.version`` (eagerly, after a deploy).

    Rewrites the latest checkpoint of every thread and namespace that is behind
    (``all_history=True``: every checkpoint), in batches. Safe to stop at any
    point and run again (it continues where it stopped), and to run in several
    processes at once (each checkpoint is claimed by one of them). A checkpoint
    that fails is reported with its thread id and error, and the run goes on.

    Args:
        saver: A saver implementing :class:`AsyncMigrationStore`.
        m: The migrations; the chain is validated first.
        dry_run: Write nothing: count per stored version what would change and
            run the steps on up to ``sample_size`` checkpoints of each version.
        batch_size: Checkpoints claimed and rewritten per batch.
        all_history: Upgrade every checkpoint, not only the latest ones.
        progress: Called with a :class:`Progress` after every batch.
        sample_size: Dry run only: checkpoints sampled per stored version.
        claim_wait: Candidates another worker had claimed are retried in a new
            pass (they are done by then, or the claim of a dead worker has
            expired) for up to this many seconds.

    Returns:
        An :class:`UpgradeResult`; ``result.ok`` is ``False`` if any failed.

    Raises:
        MigrationsError: the saver does not implement the protocol.
        MigrationChainError: the chain of ``m`` is invalid.
    """
    check_args(batch_size, sample_size)
    store: AsyncMigrationStore = require(saver, AsyncMigrationStore, "aupgrade_all")
    upgrade = upgrader(m)
    started = time.perf_counter()
    result = UpgradeResult(target_version=m.version, dry_run=dry_run, all_history=all_history)
    counts = await store.amigration_counts(below=m.version, all_history=all_history)
    if dry_run:
        for v in sorted(counts):
            sample = await store.amigration_sample(
                version=v, all_history=all_history, limit=sample_size
            )
            found = sample_findings(v, counts[v], sample, upgrade)
            result.dry_run_versions.append(found)
            result.by_version[v] = counts[v]
            result.failures.extend(found.sample_failures)
        result.seconds = time.perf_counter() - started
        return result
    prog = Progress(total=sum(counts.values()))
    deadline = time.monotonic() + claim_wait
    while True:  # one pass over the candidates; again while others held some
        cursor: Any = None
        held = 0
        while True:
            out = await store.amigration_upgrade_batch(
                below=m.version,
                all_history=all_history,
                cursor=cursor,
                limit=batch_size,
                upgrade=upgrade,
            )
            absorb(result, prog, out)
            held += out.skipped
            if progress is not None:
                progress(prog)
            if out.cursor is None:
                break
            cursor = out.cursor
        if not held or time.monotonic() >= deadline:
            break
        await asyncio.sleep(PASS_PAUSE)
    result.seconds = time.perf_counter() - started
    return result
