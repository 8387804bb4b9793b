"""Checks of the arguments the approval helpers take, made before any I/O.

A request stores its approvers, rules and deadline in the interrupt; a decision
stores its decider, roles and comment in the decision record and the audit
trail, and hands them to the resumed node. Each of those values is checked
here first, so a bad one raises :class:`InvalidInput` naming it while nothing
has been asked or recorded yet, and a value that passes is stored whole on
every backend: text holds no NUL (PostgreSQL ``text`` and ``jsonb`` cannot)
and no lone surrogate (it is not UTF-8); a decision is ``True`` or ``False``,
never a value that merely looks like one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

from langgraph_durable.interrupts._authz import REQUESTER
from langgraph_durable.interrupts._errors import InvalidInput

MAX_TIMEOUT = timedelta(days=36_525)
"""The longest wait a request or an escalation may set (100 years): every deadline
computed from it stays a date that Python, PostgreSQL and Redis all represent."""

FORBID_RULES = (REQUESTER,)
"""The separation-of-duties rules ``forbid=`` knows."""


def _refuse(parameter: str, reason: str, item: str | None = None) -> InvalidInput:
    return InvalidInput(parameter=parameter, reason=reason, item=item)


def _check_chars(value: str, parameter: str, item: str | None) -> None:
    if "\x00" in value:
        raise _refuse(parameter, "contains a NUL character (\\u0000), which cannot be stored", item)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _refuse(
            parameter,
            f"contains a lone surrogate at position {exc.start}, which is not valid UTF-8",
            item,
        ) from None


def check_text(value: Any, parameter: str, *, item: str | None = None) -> str:
    """``value`` if it is a string every backend stores exactly, else raise.

    Raises:
        InvalidInput: not a string, or it holds a NUL or a lone surrogate.
    """
    if not isinstance(value, str):
        raise _refuse(parameter, f"expected a string, got {type(value).__name__}", item)
    _check_chars(value, parameter, item)
    return value


def check_optional_text(value: Any, parameter: str) -> str | None:
    """:func:`check_text`, or ``None``."""
    return None if value is None else check_text(value, parameter)


def check_names(value: Any, parameter: str) -> list[str]:
    """A list of names (approvers, roles, rules): a string is one name.

    Raises:
        InvalidInput: not a string nor an iterable of strings, or a name is
            empty or holds a character that cannot be stored.
    """
    if isinstance(value, str):
        value = [value]
    elif isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(
            parameter, f"expected a string or a list of strings, got {type(value).__name__}"
        )
    names: list[str] = []
    for name in value:
        if not isinstance(name, str):
            raise _refuse(
                parameter, f"expected names as strings, got {name!r} ({type(name).__name__})"
            )
        if not name:
            raise _refuse(parameter, "holds an empty name")
        _check_chars(name, parameter, None)
        names.append(name)
    return names


def check_timeout(value: Any, parameter: str = "timeout") -> timedelta | None:
    """A wait as a ``timedelta`` (a number is seconds); ``None`` waits forever.

    Raises:
        InvalidInput: not a ``timedelta`` or a number, not finite, zero or
            negative (the wait would be over at once), or longer than
            :data:`MAX_TIMEOUT`.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (timedelta, int, float)):
        raise _refuse(
            parameter,
            f"expected a timedelta or a number of seconds, got {type(value).__name__}",
        )
    limit = f"at most {MAX_TIMEOUT.days} days (100 years)"
    if isinstance(value, float) and not math.isfinite(value):
        raise _refuse(parameter, f"{value!r} is not a number of seconds")
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if seconds <= 0:
        raise _refuse(
            parameter, f"must be positive, got {value!r}: the wait would be over before it began"
        )
    if seconds > MAX_TIMEOUT.total_seconds():
        raise _refuse(parameter, f"{value!r} is too long: a wait is {limit}")
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def check_forbid(value: Any) -> list[str]:
    """The separation-of-duties rules of a request (``forbid=``).

    Raises:
        InvalidInput: a rule this library does not know (it would allow everyone).
    """
    rules = check_names(value, "forbid")
    unknown = [r for r in rules if r not in FORBID_RULES]
    if unknown:
        known = ", ".join(repr(r) for r in FORBID_RULES)
        raise _refuse("forbid", f"unknown rule(s) {unknown!r}; the rules are: {known}")
    return rules


def requester_check(forbid: list[str], requested_by: str | None) -> Callable[[], Exception | None]:
    """What a request checks when it is about to ask: is the requester known?

    ``forbid=["requester"]`` with no requester would let everyone decide, the
    requester too. The check runs when the request is raised, not when a
    re-run node replays an answer, so a replayed run never fails on it.
    """

    def check() -> Exception | None:
        if REQUESTER not in forbid or requested_by is not None:
            return None
        return _refuse(
            "forbid",
            "forbid=['requester'] but the requester is unknown: start the run with "
            "config['configurable']['requested_by'] naming who asked; nothing was asked",
        )

    return check


def _item_answer(value: Any, key: str) -> dict[str, Any]:
    """One item's decision as a normalized answer (see :mod:`._shapes`)."""
    if value is True or value == "approve":
        return {"type": "approve", "args": None, "message": None}
    if value is False or value == "reject":
        return {"type": "reject", "args": None, "message": None}
    if isinstance(value, Mapping) and value.get("type") in ("approve", "reject"):
        message = value.get("message")
        if message is not None:
            check_text(message, "decisions", item=key)
        return {"type": value["type"], "args": None, "message": message}
    if isinstance(value, Mapping) and value.get("type") == "edit" and "args" in value:
        return {"type": "edit", "args": value["args"], "message": None}
    if isinstance(value, Mapping) and value.get("type") == "respond":
        text = check_text(value.get("message"), "decisions", item=key)
        if text:
            return {"type": "respond", "args": None, "message": text}
    raise _refuse(
        "decisions",
        'expected True, False, "approve", "reject", {"type": "edit", "args": ...} or '
        f'{{"type": "respond", "message": "..."}}, got {value!r}',
        key,
    )


def check_decisions(decisions: Any) -> dict[str, dict[str, Any]]:
    """``{item key: answer}`` of a batch decision, keys as strings.

    Raises:
        InvalidInput: not a mapping, a value that is not a decision (``"false"``
            or ``None`` would be read as one), a key that cannot be stored, or one
            key given twice with different values.
    """
    if not isinstance(decisions, Mapping):
        raise _refuse(
            "decisions",
            f"expected a mapping of item key to a decision, got {type(decisions).__name__}",
        )
    out: dict[str, dict[str, Any]] = {}
    for key, value in decisions.items():
        k = check_text(str(key), "decisions", item=str(key))
        answer = _item_answer(value, k)
        if out.get(k, answer) != answer:
            raise _refuse("decisions", "given twice, with different decisions", k)
        out[k] = answer
    return out


def decider_args(
    *, by: Any, comment: Any, roles: Any, approval_id: Any, id_parameter: str
) -> tuple[str, str | None, list[str], str | None]:
    """``(by, comment, roles, approval id)`` of a decision, checked.

    Raises:
        InvalidInput: ``by`` is empty or not a string; ``comment`` or the id is
            not a string; ``roles`` is not a list of names; any of them holds a
            character that cannot be stored.
    """
    who = check_text(by, "by")
    if not who:
        raise _refuse("by", "is empty: a decision names its decider")
    return (
        who,
        check_optional_text(comment, "comment"),
        check_names(roles, "roles"),
        check_optional_text(approval_id, id_parameter),
    )
