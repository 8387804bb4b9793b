"""The shapes the ecosystem speaks: what an approval shows, and the resumes it understands.

An approval's interrupt value carries LangChain v1's human-in-the-loop request
(``langchain.agents.middleware.HITLRequest``) beside the deadline key, so Studio,
Agent Inbox and ``useStream`` review cards render it::

    {
      "__durable_wait__": {...},                  # the deadline convention
      "approval": {...},                          # our own fields
      "action_requests": [{"name": "refund", "args": {...}, "description": "..."}],
      "review_configs": [{"action_name": "refund", "allowed_decisions": ["approve", "reject"]}],
    }

With ``ui="human_interrupt"`` the value is instead the legacy Agent Inbox list
(``langgraph.prebuilt.interrupt.HumanInterrupt``): one element, which carries
the deadline key and our fields beside ``action_request``/``config``/``description``.

A resume is read into one normalized answer per action, a dict
``{"type": "approve" | "reject" | "edit" | "respond", "args": ..., "message": ...}``.
Everything here is pure: no I/O, no LangGraph runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langgraph_durable.checkpointers import WAIT_KEY
from langgraph_durable.interrupts._errors import InvalidInput, ResumeNotUnderstood

DECISION_TYPES = ("approve", "reject", "edit", "respond")
"""The decisions a human can make (LangChain v1's ``DecisionType``)."""

DEFAULT_ALLOWED = ("approve", "reject")
"""What a request allows unless it says otherwise."""

UiShape = Literal["hitl", "human_interrupt"]

ACCEPTED_SHAPES = (
    "True / False",
    '"approve" / "reject"',
    '{"decisions": [{"type": "approve"} | {"type": "reject", "message": "..."} | '
    '{"type": "edit", "edited_action": {"name": "...", "args": {...}}} | '
    '{"type": "respond", "message": "..."}]}  (LangChain HITLResponse, one per action)',
    'one such decision alone, e.g. {"type": "approve"}',
    '[{"type": "accept" | "ignore" | "edit" | "response", "args": ...}]  '
    "(legacy HumanResponse list, one per action)",
)
"""The resume shapes an approval understands, as error messages list them."""

# legacy HumanResponse type -> our decision type
_LEGACY = {"accept": "approve", "ignore": "reject", "edit": "edit", "response": "respond"}


def check_allowed(value: Any, parameter: str = "allowed_decisions") -> list[str]:
    """The decisions a request allows, checked.

    Raises:
        InvalidInput: not a list of known decision types, or empty.
    """
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names:
        raise InvalidInput(
            parameter=parameter,
            reason=f"expected a non-empty list of {', '.join(DECISION_TYPES)}; got {value!r}",
        )
    unknown = [n for n in names if n not in DECISION_TYPES]
    if unknown:
        raise InvalidInput(
            parameter=parameter,
            reason=f"unknown decision(s) {unknown!r}; "
            f"the decisions are {', '.join(DECISION_TYPES)}",
        )
    return list(dict.fromkeys(names))


def action_args(request: Any) -> dict[str, Any]:
    """The ``args`` an action request shows for a request payload (a dict as is)."""
    return request if isinstance(request, dict) else {"request": request}


def unwrap_args(request: Any, args: Any) -> Any:
    """Edited ``args`` back in the request's own form (undoes :func:`action_args`)."""
    if not isinstance(request, dict) and isinstance(args, dict) and set(args) == {"request"}:
        return args["request"]
    return args


def action_name(request: Any, name: str | None) -> str:
    """The action's name: given, else the request's ``"action"`` text, else ``"approval"``."""
    if name:
        return name
    if isinstance(request, dict) and isinstance(request.get("action"), str) and request["action"]:
        return str(request["action"])
    return "approval"


def hitl_fields(actions: Sequence[tuple[str, Any, str | None, Sequence[str]]]) -> dict[str, Any]:
    """``action_requests`` and ``review_configs`` of ``(name, args, description, allowed)``."""
    requests: list[dict[str, Any]] = []
    configs: list[dict[str, Any]] = []
    for name, args, description, allowed in actions:
        req: dict[str, Any] = {"name": name, "args": args}
        if description is not None:
            req["description"] = description
        requests.append(req)
        configs.append({"action_name": name, "allowed_decisions": list(allowed)})
    return {"action_requests": requests, "review_configs": configs}


def legacy_item(
    name: str, args: Any, description: str | None, allowed: Sequence[str]
) -> dict[str, Any]:
    """One legacy ``HumanInterrupt`` (Agent Inbox before LangChain v1)."""
    return {
        "action_request": {"action": name, "args": args},
        "config": {
            "allow_ignore": "reject" in allowed,
            "allow_respond": "respond" in allowed,
            "allow_edit": "edit" in allowed,
            "allow_accept": "approve" in allowed,
        },
        "description": description,
    }


def shaped_value(
    marker: dict[str, Any],
    kind: str,
    section: dict[str, Any],
    actions: Sequence[tuple[str, Any, str | None, Sequence[str]]],
    ui: UiShape,
) -> Any:
    """The whole interrupt value: the deadline key, our section, and the UI's shape."""
    if ui == "human_interrupt":
        items = [legacy_item(*a) for a in actions]
        first = {**items[0], WAIT_KEY: marker, kind: section}
        return [first, *items[1:]]
    return {WAIT_KEY: marker, kind: section, **hitl_fields(actions)}


def check_ui(value: Any) -> UiShape:
    """``ui=`` of a request, checked."""
    if value == "hitl":
        return "hitl"
    if value == "human_interrupt":
        return "human_interrupt"
    raise InvalidInput(
        parameter="ui", reason=f'expected "hitl" or "human_interrupt", got {value!r}'
    )


# -- reading resumes ---------------------------------------------------------------------


def _not_understood(value: Any, why: str) -> ResumeNotUnderstood:
    return ResumeNotUnderstood(value=value, reason=why, accepted=list(ACCEPTED_SHAPES))


def _text(value: Any, what: str, whole: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _not_understood(whole, f"{what} must be text, got {type(value).__name__}")


def _hitl_decision(d: Any, whole: Any) -> dict[str, Any]:
    if not isinstance(d, dict) or d.get("type") not in DECISION_TYPES:
        raise _not_understood(whole, f"{d!r} is not a decision")
    kind = d["type"]
    if kind == "edit":
        action = d.get("edited_action")
        if not isinstance(action, dict) or not isinstance(action.get("args"), dict):
            raise _not_understood(whole, 'an edit needs "edited_action": {"name", "args": {...}}')
        return {"type": "edit", "args": action["args"], "name": action.get("name"), "message": None}
    message = _text(d.get("message"), f"the {kind} message", whole)
    if kind == "respond" and not message:
        raise _not_understood(whole, 'a respond decision needs "message": the answer')
    return {"type": kind, "args": None, "message": message}


def _legacy_response(d: Any, whole: Any) -> dict[str, Any]:
    kind = _LEGACY[d["type"]]
    args = d.get("args")
    if kind == "edit":
        inner = args.get("args") if isinstance(args, dict) else None
        if not isinstance(inner, dict):
            raise _not_understood(whole, 'a legacy edit needs "args": {"action", "args": {...}}')
        return {"type": "edit", "args": inner, "name": args.get("action"), "message": None}
    if kind == "respond":
        text = _text(args, "a legacy response", whole)
        if not text:
            raise _not_understood(whole, 'a legacy response needs "args": the text')
        return {"type": "respond", "args": None, "message": text}
    return {"type": kind, "args": None, "message": None}


def _is_legacy(d: Any) -> bool:
    return isinstance(d, dict) and d.get("type") in _LEGACY and "args" in d


def read_answers(value: Any, count: int) -> list[dict[str, Any]]:
    """The normalized answers a resume gives for ``count`` actions, in order.

    A plain ``True``/``False``/``"approve"``/``"reject"`` answers every action alike;
    a HITLResponse or legacy list gives one decision per action, in order.

    Raises:
        ResumeNotUnderstood: anything else (the error lists the accepted shapes).
    """
    if value is True or value == "approve":
        return [{"type": "approve", "args": None, "message": None}] * count
    if value is False or value == "reject":
        return [{"type": "reject", "args": None, "message": None}] * count
    if isinstance(value, dict) and "decisions" in value:
        given = value["decisions"]
        if not isinstance(given, list):
            raise _not_understood(value, '"decisions" must be a list')
        answers = [_hitl_decision(d, value) for d in given]
    elif isinstance(value, list) and value and all(_is_legacy(d) for d in value):
        answers = [_legacy_response(d, value) for d in value]
    elif _is_legacy(value) and value.get("type") not in DECISION_TYPES:
        answers = [_legacy_response(value, value)]
    elif isinstance(value, dict) and value.get("type") in DECISION_TYPES:
        answers = [_hitl_decision(value, value)]
    else:
        raise _not_understood(value, "not a shape an approval reads")
    if len(answers) != count:
        raise _not_understood(
            value, f"{len(answers)} decision(s) for {count} action(s): give one per action"
        )
    return answers
