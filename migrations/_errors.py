"""Exceptions raised by :mod:`migrations`.

Every error this package raises on purpose derives from :class:`MigrationsError`,
so ``except MigrationsError`` catches a refused read, a failing step and a
badly registered chain alike. Fields are keyword-only and carry what an
operator needs to act: the thread, the versions, the step.
"""

from __future__ import annotations


class MigrationsError(Exception):
    """Root of every error raised by :mod:`migrations`."""


class MigrationChainError(MigrationsError, ValueError):
    """The registered steps do not form a usable chain (raised when the app starts).

    Raised by :meth:`StateMigrations.validate` (which every saver calls when it
    is constructed) and by the registration methods themselves, so a gap such as
    ``0 -> 1, 2 -> 3`` with ``version=3`` fails at import/startup time rather
    than when an old thread resumes days later.

    Attributes:
        reason: What is wrong with the chain.
    """

    def __init__(self, *, reason: str) -> None:
        self.reason = reason
        super().__init__(f"invalid migration chain: {reason}")


class SchemaVersionError(MigrationsError):
    """A stored checkpoint cannot be brought to the code's schema version.

    Either the checkpoint was written by newer code (a rolled-back deploy), or
    it is older than the oldest registered step, so no path leads to the code's
    version. Nothing was changed in storage.

    Attributes:
        thread_id: Thread of the checkpoint.
        checkpoint_ns: Namespace of the checkpoint.
        checkpoint_id: The checkpoint that was refused.
        stored_version: Schema version the checkpoint was written with.
        code_version: Schema version the running code writes.
        reason: ``"newer than the code"`` or ``"no upgrade path"`` with details.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        stored_version: int,
        code_version: int,
        reason: str,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        self.stored_version = stored_version
        self.code_version = code_version
        self.reason = reason
        where = f"thread {thread_id!r}"
        if checkpoint_ns:
            where += f", namespace {checkpoint_ns!r}"
        if checkpoint_id:
            where += f", checkpoint {checkpoint_id!r}"
        super().__init__(
            f"{where} was stored with schema version {stored_version}, "
            f"this code writes version {code_version}: {reason}"
        )


class MigrationError(MigrationsError):
    """An upgrade step raised, returned something unusable, or failed validation.

    The checkpoint is left exactly as stored: upgrades are computed on a copy and
    either every step applies or none does.

    Attributes:
        step: Name of the step (``"price_to_money (1->2)"``).
        thread_id: Thread of the checkpoint being upgraded.
        from_version: Version the failing step upgrades from.
        to_version: Version the failing step upgrades to.
        reason: What went wrong (the step's exception is chained as ``__cause__``).
        checkpoint_ns: Namespace of the checkpoint.
        checkpoint_id: The checkpoint being upgraded.
    """

    def __init__(
        self,
        *,
        step: str,
        thread_id: str,
        from_version: int,
        to_version: int,
        reason: str,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
    ) -> None:
        self.step = step
        self.thread_id = thread_id
        self.from_version = from_version
        self.to_version = to_version
        self.reason = reason
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        where = f"thread {thread_id!r}"
        if checkpoint_id:
            where += f", checkpoint {checkpoint_id!r}"
        super().__init__(f"migration step {step} failed on {where}: {reason}")
