"""What the Redis saver and its runners share: driver errors, reply checks, client checks."""

from __future__ import annotations

import re
from typing import Any

from redis import exceptions as rx

from langgraph_durable.checkpointers._errors import (
    InvalidConfigError,
    StorageRefusedError,
    StorageUnavailableError,
)
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._ops import Cmd

UNAVAILABLE = (rx.ConnectionError, rx.TimeoutError, rx.ClusterDownError, rx.TryAgainError)
"""Driver errors of a server that cannot be reached (down, loading its data, failing
over): the shells send the call again on a new connection."""
NOT_SERVING = (rx.OutOfMemoryError, rx.ReadOnlyError)
"""Error replies of a server that answers but cannot serve writes now (out of
memory, a read-only replica): unavailability too, but not resent at once."""
REFUSED_CONNECTING = (rx.AuthenticationError, rx.AuthorizationError, rx.ExternalAuthProviderError)
"""Connection errors that are answers, not unavailability: a wrong password or user."""
UNAVAILABLE_REPLIES = frozenset(
    [
        "LOADING",
        "OOM",
        "READONLY",
        "MASTERDOWN",
        "CLUSTERDOWN",
        "TRYAGAIN",
        "BUSY",
        "MISCONF",
        "NOREPLICAS",
    ]
)
"""Codes of error replies that say the server cannot serve now (the first ones
also arrive as classes, the others only as codes, and all as codes when a
script's command met them): loading, out of memory, a read-only replica,
failing over; running a long script, unable to persist, too few replicas."""
# the codes of the error replies redis-py turns into classes (it drops the code)
_CODES: tuple[tuple[type[Exception], str], ...] = (
    (rx.OutOfMemoryError, "OOM"),
    (rx.BusyLoadingError, "LOADING"),
    (rx.ReadOnlyError, "READONLY"),
    (rx.NoPermissionError, "NOPERM"),
    (rx.ExecAbortError, "EXECABORT"),
    (rx.NoScriptError, "NOSCRIPT"),
    (rx.TryAgainError, "TRYAGAIN"),
    (rx.MasterDownError, "MASTERDOWN"),
    (rx.ClusterDownError, "CLUSTERDOWN"),
    (rx.ClusterCrossSlotError, "CROSSSLOT"),
)
_CODE = re.compile(r"(?:Error running script .*?: @\w+:\d+: )?([A-Z]+) ")
RETRIES = 3
TOLERATED = {"CONFIG"}  # setup() copes with CONFIG being disabled


def reply_code(exc: Exception) -> str | None:
    """The code of a Redis error reply (``WRONGTYPE``, ``NOPERM``...), when known."""
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    if type(exc) is rx.ResponseError:
        # a reply redis-py has no class for keeps its code as the first word,
        # after the script's name and line when a script's command failed
        found = _CODE.match(str(exc))
        return found.group(1) if found else None
    return None


def translate(exc: Exception, operation: str) -> Exception:
    """A driver error as one of ours, by what it says about the server.

    Unreachable or not serving now (a dropped connection, a timeout, a server
    that is loading, out of memory or read-only): :class:`StorageUnavailableError`.
    Any other answer (a refused password, ``NOPERM``, ``WRONGTYPE``, a script
    error): :class:`StorageRefusedError`, which a retry does not cure.
    """
    if isinstance(exc, REFUSED_CONNECTING):
        return StorageRefusedError(backend="redis", operation=operation, code=None, reason=str(exc))
    code = reply_code(exc)
    if isinstance(exc, (*UNAVAILABLE, *NOT_SERVING)) or code in UNAVAILABLE_REPLIES:
        return StorageUnavailableError(backend="redis", operation=operation, reason=str(exc))
    if isinstance(exc, rx.RedisError):
        return StorageRefusedError(backend="redis", operation=operation, code=code, reason=str(exc))
    return exc


OPENING = "from_conn_string"
"""The operation named by errors of opening a client for a URL."""


def opening_error(exc: Exception, probe: Exception | None = None) -> Exception:
    """A failure to open ``from_conn_string``'s client, as one of ours (see :func:`translate`).

    A cluster client that reached no node raises redis-py's
    ``RedisClusterException``, which is no ``RedisError`` and keeps only the
    node's message; ``probe`` is then what a plain client's ``PING`` of the same
    URL raised, which tells a refused password from a server that is down.
    """
    if isinstance(exc, rx.RedisClusterException) and not isinstance(exc, rx.RedisError):
        exc = probe if isinstance(probe, rx.RedisError) else rx.ConnectionError(str(exc))
    return translate(exc, OPENING)


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
