"""The injectable clock: every helper reads time through one of these."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

Clock = Callable[[], datetime]
"""A zero-argument callable returning the current time as an aware UTC datetime."""

CLOCK_CONFIG_KEY = "__durable_clock__"
"""``config["configurable"]`` key through which a run passes its clock to nodes.

The leading ``__`` keeps it out of checkpoint metadata (LangGraph skips such keys).
"""


def utc_now() -> datetime:
    """The real clock."""
    return datetime.now(timezone.utc)


def as_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime (naive values are taken to be UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def now_of(clock: Clock | None) -> datetime:
    """The current time by ``clock`` (the real clock when ``None``)."""
    return as_utc((clock or utc_now)())


def clock_from_config(config: Any) -> Clock | None:
    """The clock a run was given in its config, if any."""
    if not isinstance(config, dict):
        return None
    clock = (config.get("configurable") or {}).get(CLOCK_CONFIG_KEY)
    return clock if callable(clock) else None


def with_clock(config: dict[str, Any], clock: Clock | None) -> dict[str, Any]:
    """A copy of ``config`` carrying ``clock`` for the nodes of the run."""
    configurable = dict(config.get("configurable") or {})
    if clock is not None:
        configurable[CLOCK_CONFIG_KEY] = clock
    return {**config, "configurable": configurable}
