"""Exceptions raised by the savers.

Every error a saver raises on purpose derives from :class:`CheckpointerError`.
Driver errors (psycopg, redis-py) are translated at the boundary into one of
these, so callers never have to import a driver to catch a saver failure.
"""

from __future__ import annotations

from datetime import datetime


class CheckpointerError(Exception):
    """Root of every error raised by :mod:`checkpointers`."""


class InvalidConfigError(CheckpointerError, ValueError):
    """A config or argument value the saver cannot store.

    Attributes:
        field: The name of the offending field (``thread_id``, ``checkpoint_ns``...).
        reason: Why the value was refused.
    """

    def __init__(self, *, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid {field}: {reason}")


class UnstorableValueError(InvalidConfigError, TypeError):
    """A value the serializer cannot store exactly (refused instead of altered).

    For example a string holding a lone surrogate (which msgpack would store
    as ``"?"``), a dict key that is not valid UTF-8, or an integer beyond 64
    bits. Also a ``TypeError``, which serializers raise for such values.

    Attributes:
        field: What held the value (``metadata``, ``channel value``...).
        reason: Why it cannot be stored.
    """


class UnreadableValueError(UnstorableValueError):
    """A value whose type a read would refuse to rebuild: refused when it is written.

    The savers read with a strict msgpack allowlist (no code runs for a type
    outside it), so a value holding an application type (a dataclass, a
    pydantic model, ``langchain_core.agents.AgentAction``) that the allowlist
    does not name would be stored and then refused on the next read. It is
    refused at ``put`` / ``put_writes`` instead, before anything is stored.

    Attributes:
        field: What held the value (``channel value``, ``metadata``...).
        channel: The channel, for a channel value or pending write (else ``None``).
        types: The refused types, as ``module.Name``.
        reason: What to do about it.
    """

    def __init__(self, *, field: str, channel: str | None, types: tuple[str, ...]) -> None:
        self.channel = channel
        self.types = types
        pairs = ", ".join(repr(tuple(t.rsplit(".", 1))) for t in types)
        holder = f"channel {channel!r}" if channel is not None else "it"
        super().__init__(
            field=field,
            reason=(
                f"{holder} holds {', '.join(types)}, which a read would refuse (not in the "
                f"msgpack allowlist); fix: compile with "
                f"checkpointer=saver.with_allowlist([{pairs}]), or set "
                "LANGGRAPH_STRICT_MSGPACK=true so the graph allows its schemas' types"
            ),
        )


class CorruptCheckpointError(CheckpointerError):
    """A stored value could not be deserialized.

    Attributes:
        thread_id: Thread of the checkpoint.
        checkpoint_ns: Namespace of the checkpoint.
        checkpoint_id: The checkpoint whose data is unreadable.
        channel: The channel (or ``"<checkpoint>"``/``"<metadata>"``) that failed.
        reason: What the deserializer said.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        channel: str,
        reason: str,
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        self.channel = channel
        self.reason = reason
        super().__init__(
            f"cannot read channel {channel!r} of checkpoint {checkpoint_id!r} "
            f"(thread {thread_id!r}, namespace {checkpoint_ns!r}): {reason}"
        )


class StorageUnavailableError(CheckpointerError, ConnectionError):
    """The database could not be reached or dropped the connection mid-call.

    The operation did not complete; nothing half-written is visible. Retrying
    the call after the server is back is safe.

    Attributes:
        backend: ``"postgres"`` or ``"redis"``.
        operation: The saver method that failed.
    """

    def __init__(self, *, backend: str, operation: str, reason: str) -> None:
        self.backend = backend
        self.operation = operation
        self.reason = reason
        super().__init__(f"{backend} unavailable during {operation}: {reason}")


class StorageRefusedError(CheckpointerError):
    """The server answered and refused the operation, for a reason other than availability.

    A privilege missing, a read-only transaction, a limit of the server's (an
    index row too large), a value of the wrong type at a key: waiting for the
    server does not help, so this is never a :class:`StorageUnavailableError`
    and a caller that retries on unavailability does not spin on it. Nothing of
    the operation was stored.

    Attributes:
        backend: ``"postgres"`` or ``"redis"``.
        operation: The saver method that failed.
        code: The server's error code (PostgreSQL's SQLSTATE, the first word of
            a Redis error reply), or ``None`` when the driver refused before sending.
        reason: The server's message.
    """

    def __init__(self, *, backend: str, operation: str, code: str | None, reason: str) -> None:
        self.backend = backend
        self.operation = operation
        self.code = code
        self.reason = reason
        what = f" ({code})" if code else ""
        super().__init__(f"{backend} refused {operation}{what}: {reason}")


class MissingGrantError(StorageRefusedError):
    """The database role lacks a privilege the call needs; its message names the grant.

    For example an application role without ``EXECUTE`` on the audit functions
    (see the README's audit grants). Nothing of the operation was stored.

    Attributes:
        backend: ``"postgres"``.
        operation: The saver method that failed.
        code: The server's error code (SQLSTATE ``42501``).
        reason: The server's message.
        grant: The statement an administrator runs to give the privilege
            (``<role>`` stands for the role the saver connects as).
    """

    def __init__(
        self, *, backend: str, operation: str, code: str | None, reason: str, grant: str
    ) -> None:
        self.grant = grant
        super().__init__(
            backend=backend, operation=operation, code=code, reason=f"{reason}; needs {grant}"
        )
        self.reason = reason


class PoolTimeoutError(StorageUnavailableError, TimeoutError):
    """No connection of the saver's pool became free within the pool's timeout.

    Either every connection is busy (more concurrent calls than the pool holds
    for longer than the timeout) or the server cannot be reached. Nothing was
    sent; retrying is safe. Raise the pool size or its ``timeout``.

    Attributes:
        backend: ``"postgres"`` or ``"redis"``.
        operation: The saver method that failed.
    """


class ThreadBusy(CheckpointerError):
    """A run of the thread was turned away: another live run holds it.

    Raised by a saver built with ``multitask="reject"`` (or ``"enqueue"``, once
    its wait ran out) when a run starts on a thread whose run lease a live run
    holds. Raised before any node runs and before anything is written, so the
    thread is exactly as the holder leaves it; try again later.

    Attributes:
        thread_id: The thread.
        owner: Lease owner id of the holding run (``host:pid:kind:random``).
        since: When the holding run took the lease (``None`` if unknown).
        strategy: ``"reject"`` or ``"enqueue"``.
        waited: Seconds spent waiting for the holder (``0`` for ``reject``).
    """

    def __init__(
        self,
        *,
        thread_id: str,
        owner: str | None,
        since: datetime | None,
        strategy: str,
        waited: float = 0.0,
    ) -> None:
        self.thread_id = thread_id
        self.owner = owner
        self.since = since
        self.strategy = strategy
        self.waited = waited
        held = f" since {since.isoformat()}" if since is not None else ""
        after = f" after waiting {waited:.1f} s" if strategy == "enqueue" else ""
        super().__init__(
            f"thread {thread_id!r} is busy: a run by {owner or 'an unknown owner'} holds it"
            f"{held} (multitask={strategy!r}{after})"
        )


class LayoutVersionError(CheckpointerError):
    """The storage layout is newer than this code knows, or was never set up.

    Attributes:
        found: The layout version found in storage (``None`` if not set up).
        expected: The newest layout version this code knows.
        where: The storage read, when known (``schema "app" of database
            "prod"``, ``prefix "lgd"``).
    """

    def __init__(
        self, *, found: int | None, expected: int, hint: str, where: str | None = None
    ) -> None:
        self.found = found
        self.expected = expected
        self.where = where
        if found is None:
            at = f" for {where}" if where else ""
            message = f"storage is not set up{at}: {hint}"
        else:
            message = f"storage layout version is {found}, this code knows up to {expected}: {hint}"
        super().__init__(message)


def setup_hint(url: str) -> str:
    """What to do about storage never set up, ``url`` the form of ``--url`` that names it.

    ``url`` is a shape (``"postgresql://...?schema=app"``), never the user's URL:
    an error message must not carry a password.
    """
    return f'call saver.setup() once, or run `langgraph-durable setup --url "{url}"`'
