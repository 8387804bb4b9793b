"""Eager upgrades of stored checkpoints: :func:`upgrade_all` and the protocol savers implement.

The runner knows nothing about storage. A saver that supports bulk upgrades
implements :class:`MigrationStore` (and :class:`AsyncMigrationStore` for the
async runner): find the checkpoints behind a version in key order, claim a batch
(a claim keeps concurrent workers off the same checkpoints), and rewrite each
one atomically with what :func:`migrations.upgrade_checkpoint` computed. The
runner walks the key space with a cursor, so it holds one batch at a time
(constant memory), a restarted run simply starts again (everything already
upgraded is no longer behind: idempotent and resumable), and a checkpoint that
fails is reported and skipped without stopping the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.migrations._chain import StateMigrations
from langgraph_durable.migrations._errors import MigrationsError
from langgraph_durable.migrations._upgrade import Upgrade, upgrade_checkpoint

_PASS_PAUSE = 1.0

UpgradeFn = Callable[[CheckpointTuple, int], Upgrade]
"""``(tuple as stored, stored version) -> Upgrade``; raises on failure."""


@dataclass(frozen=True)
class CheckpointRef:
    """Identifies one stored checkpoint.

    Attributes:
        thread_id: Its thread.
        checkpoint_ns: Its namespace (``""`` for the root graph).
        checkpoint_id: Its id.
        schema_version: The version it was stored with (before the upgrade).
    """

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    schema_version: int


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one claimed checkpoint.

    Attributes:
        ref: The checkpoint.
        error: ``None`` if it was rewritten; else why not (it is left as stored).
    """

    ref: CheckpointRef
    error: BaseException | None = None


@dataclass(frozen=True)
class BatchOutcome:
    """What one call to ``migration_upgrade_batch`` did.

    Attributes:
        items: Every checkpoint this worker claimed in the batch, with its outcome.
        skipped: Candidates passed over because another worker holds them.
        cursor: Where the next batch starts (opaque to the runner), or ``None``
            when no candidate is left after this batch.
    """

    items: list[ItemOutcome]
    skipped: int = 0
    cursor: Any = None


@dataclass(frozen=True)
class VersionStatus:
    """Counts of stored data on one schema version (for ``langgraph-durable status``).

    Attributes:
        schema_version: The version.
        threads: Threads whose latest checkpoint (root namespace) is on it.
        checkpoints: Checkpoints stored with it (all namespaces, all history).
        paused_threads: Of ``threads``, those paused at an interrupt.
    """

    schema_version: int
    threads: int
    checkpoints: int
    paused_threads: int


@runtime_checkable
class MigrationStore(Protocol):
    """What a saver implements so :func:`upgrade_all` can drive it (sync)."""

    def migration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """Count the candidates per stored version: checkpoints with a version below ``below``.

        Latest-only (``all_history=False``) counts only the newest checkpoint of
        each ``(thread_id, checkpoint_ns)``.
        """
        ...

    def migration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """Read up to ``limit`` candidates stored with ``version``, without claiming."""
        ...

    def migration_upgrade_batch(
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

    def migration_status(self) -> list[VersionStatus]:
        """Per schema version: threads, checkpoints, and threads paused at an interrupt."""
        ...


@runtime_checkable
class AsyncMigrationStore(Protocol):
    """The async twin of :class:`MigrationStore` (same semantics, ``a``-prefixed)."""

    async def amigration_counts(self, *, below: int, all_history: bool) -> dict[int, int]:
        """See :meth:`MigrationStore.migration_counts`."""
        ...

    async def amigration_sample(
        self, *, version: int, all_history: bool, limit: int
    ) -> list[CheckpointTuple]:
        """See :meth:`MigrationStore.migration_sample`."""
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
        """See :meth:`MigrationStore.migration_upgrade_batch`."""
        ...

    async def amigration_status(self) -> list[VersionStatus]:
        """See :meth:`MigrationStore.migration_status`."""
        ...


@dataclass(frozen=True)
class Failure:
    """A checkpoint that could not be upgraded.

    Attributes:
        thread_id: Its thread.
        checkpoint_ns: Its namespace.
        checkpoint_id: Its id.
        schema_version: The version it is still stored with.
        error: The error, as ``"ExceptionType: message"``.
    """

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    schema_version: int
    error: str


@dataclass(frozen=True)
class DryRunVersion:
    """Dry-run findings for one stored version.

    Attributes:
        schema_version: The stored version.
        would_change: How many checkpoints (latest-only: threads) would be rewritten.
        sampled: How many of them were upgraded in memory as a sample.
        sample_failures: Failures among the sample.
    """

    schema_version: int
    would_change: int
    sampled: int
    sample_failures: list[Failure] = field(default_factory=list)


@dataclass
class Progress:
    """Passed to the ``progress`` callback after every batch.

    Attributes:
        total: Candidates counted when the run started (others may do some).
        upgraded: Rewritten by this run so far.
        failed: Failed in this run so far.
        skipped: Passed over because another worker held them.
    """

    total: int
    upgraded: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def done(self) -> int:
        """Candidates this run has dealt with (upgraded, failed or skipped)."""
        return self.upgraded + self.failed + self.skipped


@dataclass
class UpgradeResult:
    """What :func:`upgrade_all` did.

    Attributes:
        target_version: The version checkpoints were brought to.
        dry_run: Whether this was a dry run (nothing written).
        all_history: Whether every checkpoint (not only the latest) was a candidate.
        upgraded: Checkpoints rewritten by this run.
        skipped: Times a candidate was found held by another worker (such
            candidates are retried in a later pass, see ``claim_wait``).
        by_version: Rewritten (dry run: would be rewritten) per stored version.
        failures: Every checkpoint that failed (dry run: failed in the sample).
        dry_run_versions: Dry run only: the per-version findings.
        seconds: Wall time of the run.
    """

    target_version: int
    dry_run: bool
    all_history: bool
    upgraded: int = 0
    skipped: int = 0
    by_version: dict[int, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    dry_run_versions: list[DryRunVersion] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        """How many checkpoints failed."""
        return len(self.failures)

    @property
    def ok(self) -> bool:
        """``True`` when nothing failed."""
        return not self.failures


def _failure(ref: CheckpointRef, exc: BaseException) -> Failure:
    return Failure(
        thread_id=ref.thread_id,
        checkpoint_ns=ref.checkpoint_ns,
        checkpoint_id=ref.checkpoint_id,
        schema_version=ref.schema_version,
        error=f"{type(exc).__name__}: {exc}",
    )


def _check_args(batch_size: int, sample_size: int) -> None:
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(sample_size, int) or sample_size < 0:
        raise ValueError(f"sample_size must be an int >= 0, got {sample_size!r}")


def _require(saver: Any, proto: type, what: str) -> None:
    if not isinstance(saver, proto):
        raise MigrationsError(
            f"{type(saver).__name__} does not support {what}: it does not implement "
            f"langgraph_durable.migrations.{proto.__name__} (the langgraph-durable savers do)"
        )


def _upgrader(m: StateMigrations) -> UpgradeFn:
    m.validate()

    def upgrade(tup: CheckpointTuple, stored_version: int) -> Upgrade:
        return upgrade_checkpoint(tup, stored_version, m)

    return upgrade


def _sample_findings(
    version: int, count: int, sample: Iterable[CheckpointTuple], upgrade: UpgradeFn
) -> DryRunVersion:
    fails: list[Failure] = []
    n = 0
    for tup in sample:
        n += 1
        conf = tup.config.get("configurable", {})
        ref = CheckpointRef(
            str(conf.get("thread_id", "")),
            str(conf.get("checkpoint_ns", "")),
            str(conf.get("checkpoint_id", tup.checkpoint.get("id", ""))),
            version,
        )
        try:
            upgrade(tup, version)
        except Exception as exc:
            fails.append(_failure(ref, exc))
    return DryRunVersion(version, count, n, fails)


def _absorb(result: UpgradeResult, progress: Progress, out: BatchOutcome) -> None:
    for item in out.items:
        if item.error is None:
            result.upgraded += 1
            v = item.ref.schema_version
            result.by_version[v] = result.by_version.get(v, 0) + 1
        else:
            result.failures.append(_failure(item.ref, item.error))
    result.skipped += out.skipped
    progress.upgraded = result.upgraded
    progress.failed = len(result.failures)
    progress.skipped = result.skipped


def upgrade_all(
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
        saver: A saver implementing :class:`MigrationStore`.
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
    _check_args(batch_size, sample_size)
    _require(saver, MigrationStore, "upgrade_all")
    upgrade = _upgrader(m)
    started = time.perf_counter()
    result = UpgradeResult(target_version=m.version, dry_run=dry_run, all_history=all_history)
    counts = saver.migration_counts(below=m.version, all_history=all_history)
    if dry_run:
        for v in sorted(counts):
            sample = saver.migration_sample(version=v, all_history=all_history, limit=sample_size)
            found = _sample_findings(v, counts[v], sample, upgrade)
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
            out = saver.migration_upgrade_batch(
                below=m.version,
                all_history=all_history,
                cursor=cursor,
                limit=batch_size,
                upgrade=upgrade,
            )
            _absorb(result, prog, out)
            held += out.skipped
            if progress is not None:
                progress(prog)
            if out.cursor is None:
                break
            cursor = out.cursor
        if not held or time.monotonic() >= deadline:
            break
        time.sleep(_PASS_PAUSE)
    result.seconds = time.perf_counter() - started
    return result


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
    """The async twin of :func:`upgrade_all`, for savers implementing :class:`AsyncMigrationStore`.

    Same arguments, semantics and result as :func:`upgrade_all`.
    """
    _check_args(batch_size, sample_size)
    _require(saver, AsyncMigrationStore, "aupgrade_all")
    upgrade = _upgrader(m)
    started = time.perf_counter()
    result = UpgradeResult(target_version=m.version, dry_run=dry_run, all_history=all_history)
    counts = await saver.amigration_counts(below=m.version, all_history=all_history)
    if dry_run:
        for v in sorted(counts):
            sample = await saver.amigration_sample(
                version=v, all_history=all_history, limit=sample_size
            )
            found = _sample_findings(v, counts[v], sample, upgrade)
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
            out = await saver.amigration_upgrade_batch(
                below=m.version,
                all_history=all_history,
                cursor=cursor,
                limit=batch_size,
                upgrade=upgrade,
            )
            _absorb(result, prog, out)
            held += out.skipped
            if progress is not None:
                progress(prog)
            if out.cursor is None:
                break
            cursor = out.cursor
        if not held or time.monotonic() >= deadline:
            break
        await asyncio.sleep(_PASS_PAUSE)
    result.seconds = time.perf_counter() - started
    return result
