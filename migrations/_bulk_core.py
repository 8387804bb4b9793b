"""Eager upgrades of stored checkpoints: what the bulk runner reports, and its I/O-free steps.

The runner (:func:`~langgraph_durable.migrations.aupgrade_all`, and
:func:`~langgraph_durable.migrations.upgrade_all` generated from it) knows
nothing about storage. A saver that supports bulk upgrades implements its
store protocol (:class:`~langgraph_durable.migrations.MigrationStore` /
:class:`~langgraph_durable.migrations.AsyncMigrationStore`): find the
checkpoints behind a version in key order, claim a batch (a claim keeps
concurrent workers off the same checkpoints), and rewrite each one atomically
with what :func:`~langgraph_durable.migrations.upgrade_checkpoint` computed.
The runner walks the key space with a cursor, so it holds one batch at a time
(constant memory), a restarted run simply starts again (everything already
upgraded is no longer behind: idempotent and resumable), and a checkpoint that
fails is reported and skipped without stopping the others.

This module holds what both runners share: the records of a run and the steps
that involve no I/O (argument checks, the dry run's sample, the tally).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.migrations._chain import StateMigrations
from langgraph_durable.migrations._errors import MigrationsError
from langgraph_durable.migrations._upgrade import Upgrade, upgrade_checkpoint

PASS_PAUSE = 1.0
"""Seconds between two passes over the candidates while other workers hold some."""

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


def failure(ref: CheckpointRef, exc: BaseException) -> Failure:
    """The :class:`Failure` reported for ``ref``, which raised ``exc``."""
    return Failure(
        thread_id=ref.thread_id,
        checkpoint_ns=ref.checkpoint_ns,
        checkpoint_id=ref.checkpoint_id,
        schema_version=ref.schema_version,
        error=f"{type(exc).__name__}: {exc}",
    )


def check_args(batch_size: int, sample_size: int) -> None:
    """Refuse a batch or sample size the runner cannot use (before any I/O)."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(sample_size, int) or sample_size < 0:
        raise ValueError(f"sample_size must be an int >= 0, got {sample_size!r}")


def require(saver: Any, proto: type, what: str) -> Any:
    """The part of ``saver`` that implements the store protocol ``proto``.

    That is the saver itself, or the store it holds as ``saver.migration_store``
    (the langgraph-durable savers); a saver with neither is refused.
    """
    for part in (saver, getattr(saver, "migration_store", None)):
        if part is not None and isinstance(part, proto):
            return part
    raise MigrationsError(
        f"{type(saver).__name__} does not support {what}: it does not implement "
        f"langgraph_durable.migrations.{proto.__name__} (the langgraph-durable savers do)"
    )


def upgrader(m: StateMigrations) -> UpgradeFn:
    """The upgrade step a store applies to each claimed checkpoint (the chain validated first)."""
    m.validate()

    def upgrade(tup: CheckpointTuple, stored_version: int) -> Upgrade:
        return upgrade_checkpoint(tup, stored_version, m)

    return upgrade


def sample_findings(
    version: int, count: int, sample: Iterable[CheckpointTuple], upgrade: UpgradeFn
) -> DryRunVersion:
    """Dry run: run the steps in memory on a sample of one stored version."""
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
            fails.append(failure(ref, exc))
    return DryRunVersion(version, count, n, fails)


def absorb(result: UpgradeResult, progress: Progress, out: BatchOutcome) -> None:
    """Add one batch's outcome to the run's result and progress."""
    for item in out.items:
        if item.error is None:
            result.upgraded += 1
            v = item.ref.schema_version
            result.by_version[v] = result.by_version.get(v, 0) + 1
        else:
            result.failures.append(failure(item.ref, item.error))
    result.skipped += out.skipped
    progress.upgraded = result.upgraded
    progress.failed = len(result.failures)
    progress.skipped = result.skipped
