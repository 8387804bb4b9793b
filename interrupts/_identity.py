"""Who answered a ``Command(resume=...)``: the decider named by the resuming run's config.

Agent Server puts the authenticated user of every run in
``config["configurable"]["langgraph_auth_user"]``: an object (or, once stored,
a dict) with ``identity``, ``permissions`` and ``display_name``; an
unauthenticated request leaves it ``None``. That user is the decider, and its
permissions are the roles the authorization policy sees.

Callers that authenticate users themselves (an in-process UI, a worker) name
the decider under :data:`DECIDER_KEY`: a user id, or
``{"identity": "alice", "roles": ["finance"], "display_name": "Alice"}``. When
Agent Server authenticated the run, its user wins and :data:`DECIDER_KEY` is
ignored, so a client cannot name someone else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AUTH_USER_KEY = "langgraph_auth_user"
"""Agent Server's key of the authenticated user in ``config["configurable"]``."""

DECIDER_KEY = "durable_decider"
"""Our key in ``config["configurable"]`` naming who resumes: a user id or
``{"identity": ..., "roles": [...], "display_name": ...}``."""


@dataclass(frozen=True)
class RunDecider:
    """The decider a resuming run names.

    Attributes:
        id: The user id.
        roles: Roles (Agent Server: the user's permissions).
        display_name: A readable name, when given.
        source: ``"langgraph_auth_user"`` or ``"durable_decider"``.
    """

    id: str
    roles: tuple[str, ...] = ()
    display_name: str | None = None
    source: str = DECIDER_KEY


def _field(user: Any, name: str) -> Any:
    if isinstance(user, Mapping):
        return user.get(name)
    try:
        return getattr(user, name, None)
    except Exception:  # a user object whose property raises: treat as absent
        return None


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if isinstance(v, str) and v)
    return ()


def _from_user(user: Any, source: str, roles_field: str) -> RunDecider | None:
    if user is None or user is False:
        return None
    if isinstance(user, str):
        return RunDecider(id=user, source=source) if user else None
    if _field(user, "is_authenticated") is False:
        return None
    identity = _field(user, "identity")
    if not isinstance(identity, str) or not identity:
        return None
    display = _field(user, "display_name")
    return RunDecider(
        id=identity,
        roles=_names(_field(user, roles_field)),
        display_name=display if isinstance(display, str) and display else None,
        source=source,
    )


def decider_of_config(config: Mapping[str, Any] | None) -> RunDecider | None:
    """The decider a run's config names, or ``None`` when it names nobody."""
    conf = (config or {}).get("configurable") or {}
    if conf.get(AUTH_USER_KEY) is not None:
        return _from_user(conf[AUTH_USER_KEY], AUTH_USER_KEY, "permissions")
    return _from_user(conf.get(DECIDER_KEY), DECIDER_KEY, "roles")
