"""What the sync and async Redis savers share: options, errors, command execution."""

from __future__ import annotations

import random
from collections.abc import Collection
from datetime import timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis import exceptions as rx

from langgraph_durable.checkpointers._delta import DeltaPolicy
from langgraph_durable.checkpointers._errors import (
    CheckpointerError,
    InvalidConfigError,
    StorageUnavailableError,
)
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._core import Cmd, RedisCore

UNAVAILABLE = (rx.ConnectionError, rx.TimeoutError, rx.ClusterDownError, rx.TryAgainError)
RETRIES = 3
TOLERATED = {"CONFIG"}  # setup() copes with CONFIG being disabled


def translate(exc: Exception, operation: str) -> Exception:
    """A driver error as one of ours (agreement 6)."""
    if isinstance(exc, UNAVAILABLE):
        return StorageUnavailableError(backend="redis", operation=operation, reason=str(exc))
    if isinstance(exc, rx.RedisError):
        return CheckpointerError(f"redis error during {operation}: {exc}")
    return exc


def as_eval(cmd: Cmd) -> Cmd:
    """The EVAL form of an EVALSHA command (after NOSCRIPT: a restarted or new node)."""
    return ("EVAL", S.BY_SHA[cmd[1]].source, *cmd[2:])


def check_replies(cmds: list[Cmd], replies: list[Any]) -> list[int]:
    """Indexes of replies to redo with EVAL; raise any other error."""
    redo = []
    for i, r in enumerate(replies):
        if isinstance(r, rx.NoScriptError):
            redo.append(i)
        elif isinstance(r, Exception) and cmds[i][0] not in TOLERATED:
            raise r
    return redo


def check_client(client: Any, kinds: tuple[type, ...], what: str) -> None:
    """Refuse a client of the wrong kind or one that decodes replies to str."""
    if not isinstance(client, kinds):
        raise InvalidConfigError(
            field="client", reason=f"expected {what}, got {type(client).__name__}"
        )
    kwargs: dict[str, Any] = {}
    getter = getattr(client, "get_connection_kwargs", None)
    if callable(getter):
        kwargs = getter() or {}
    elif hasattr(client, "nodes_manager"):
        kwargs = getattr(client.nodes_manager, "connection_kwargs", {}) or {}
    if kwargs.get("decode_responses"):
        raise InvalidConfigError(
            field="client", reason="must be created with decode_responses=False (values are bytes)"
        )


def describe(client: Any) -> str:
    """``host:port`` (or socket path) of a client, for log messages."""
    getter = getattr(client, "get_connection_kwargs", None)
    kwargs = getter() if callable(getter) else {}
    if kwargs.get("path"):
        return str(kwargs["path"])
    if kwargs.get("host"):
        return f"{kwargs['host']}:{kwargs.get('port', 6379)}"
    nodes = getattr(client, "startup_nodes", None) or []
    return "cluster " + ",".join(f"{n.host}:{n.port}" for n in nodes)


class RedisSaverBase(BaseCheckpointSaver[str]):
    """Options shared by :class:`RedisSaver` and :class:`AsyncRedisSaver`."""

    _core: RedisCore

    def _init_core(
        self,
        *,
        serde: SerializerProtocol | None,
        migrations: Any,
        prefix: str,
        ttl: float | timedelta | None,
        refresh_on_read: bool,
        wait_grace: float | timedelta,
        deltas: bool | DeltaPolicy = True,
    ) -> None:
        BaseCheckpointSaver.__init__(self, serde=serde or default_serde())
        self._core = RedisCore(
            serde=self.serde,
            prefix=prefix,
            ttl=ttl,
            refresh_on_read=refresh_on_read,
            wait_grace=wait_grace,
            migrations=migrations,
            deltas=deltas,
        )

    @property
    def prefix(self) -> str:
        """The key prefix this saver reads and writes under."""
        return self._core.keys.prefix

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Any:
        """A shallow clone whose deserializer also allows ``extra_allowlist``."""
        clone = super().with_allowlist(extra_allowlist)
        if isinstance(clone, RedisSaverBase) and clone is not self:
            clone._core = self._core.with_serde(clone.serde)
        return clone

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Monotonic string versions: ``<counter, 10 digits>.<48 random bits, hex>``.

        23 characters where langgraph-checkpoint-postgres writes ~51
        (``<counter, 32 digits>.<random float>``, what this saver wrote before
        layout step 5): a version is stored about ten times per step (the
        checkpoint's channel versions and versions seen, value fields, refs,
        delta bases), so the long form cost ~0.3x the payload of a growing
        thread (issue 12). Versions of the long form still sort below: a
        10-digit counter >= 1 sorts after any 32-digit one below 10**22, so a
        thread written before goes on. The random part keeps apart the value
        fields of two forks that reach the same counter. (Monotonic up to
        10**10 versions of one channel.)
        """
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:010}.{random.getrandbits(48):012x}"
