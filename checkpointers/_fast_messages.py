"""A cheaper rebuild of plain LangChain messages in LangGraph's msgpack (reads only).

LangGraph's serializer rebuilds every pydantic object of a checkpoint by
importing its module and calling ``cls(**fields)``: full validation, and for
``AIMessage`` a validator that re-parses tool calls. For a 300-message history
that is most of a read. Stored messages were validated when they were made and
dumped whole, so re-validating a *plain* message (its fields exactly the class's
fields, each a value validation returns unchanged) only rebuilds what was
dumped; ``model_construct`` with the same fields builds an equal object (same
fields, fields-set, extras and private state) without it.

Only messages that pass every check below take that path; anything else (tool
calls, usage details, extra fields, other classes, a field of an unexpected
type, a langchain-core whose message classes grew validators) goes through the
serializer's own hook, unchanged. The classes are LangGraph's safe msgpack types,
so the allowlist decides nothing here; every other type still goes through the
serializer's allowlist check and its blocked-type events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ormsgpack

__all__ = ["fast_ext_hook"]

_EXT_PYDANTIC_V2 = 5  # LangGraph's ext code for pydantic v2 objects (module, name, fields, method)
_OPT = ormsgpack.OPT_NON_STR_KEYS
_USAGE_KEYS = frozenset(("input_tokens", "output_tokens", "total_tokens"))


def _content_list(v: list[Any]) -> bool:
    return all(type(x) is str or type(x) is dict for x in v)


def _usage_counts(v: dict[Any, Any]) -> bool:
    # exactly the three required counts as ints (details go the slow way)
    return v.keys() == _USAGE_KEYS and all(type(n) is int for n in v.values())


_BASE_FIELDS = frozenset(
    ("content", "additional_kwargs", "response_metadata", "type", "name", "id")
)
_AI_FIELDS = _BASE_FIELDS | {"tool_calls", "invalid_tool_calls", "usage_metadata"}
# what was audited (langchain-core 1.x): the fields, and the model validators.
# AIMessage's tool-call compatibility validator changes nothing when
# tool_calls and invalid_tool_calls are empty and additional_kwargs holds no
# raw "tool_calls"; the others have none.
_AUDITED = {
    "AIMessage": (_AI_FIELDS, {"_backwards_compat_tool_calls"}),
    "HumanMessage": (_BASE_FIELDS, set()),
    "SystemMessage": (_BASE_FIELDS, set()),
}


class _Plain:
    """One message class whose plain instances are rebuilt without validation."""

    __slots__ = ("ai", "cls", "direct", "fields", "type")

    def __init__(self, cls: Any) -> None:
        self.cls = cls
        self.fields = frozenset(cls.model_fields)
        self.type = cls.model_fields["type"].default
        self.ai = self.fields == _AI_FIELDS
        # the state model_construct sets, set directly (4x cheaper), if this
        # pydantic keeps exactly that state: checked on a sample against cls(**fields)
        sample = cls(content="x", id="i").model_dump()
        self.direct = _same_state(_direct(cls, dict(sample)), cls(**sample))

    def build(self, kw: Any) -> Any:
        """The message, or None when ``kw`` is not plain (then the serializer builds it).

        Plain: exactly the class's fields, each of a type (and value) that
        validation returns unchanged.
        """
        if type(kw) is not dict or kw.keys() != self.fields or kw["type"] != self.type:
            return None
        v = kw["content"]
        if type(v) is not str and not (type(v) is list and _content_list(v)):
            return None
        extra = kw["additional_kwargs"]
        if type(extra) is not dict or type(kw["response_metadata"]) is not dict:
            return None
        v = kw["name"]
        if v is not None and type(v) is not str:
            return None
        v = kw["id"]
        if v is not None and type(v) is not str:
            return None
        if self.ai:
            v = kw["tool_calls"]
            if type(v) is not list or v:
                return None
            v = kw["invalid_tool_calls"]
            if type(v) is not list or v:
                return None
            v = kw["usage_metadata"]
            if v is not None and not (type(v) is dict and _usage_counts(v)):
                return None
            if extra.get("tool_calls"):
                return None
        if not self.direct:
            return self.cls.model_construct(**kw)
        obj = _new(self.cls)  # _direct, inline (once per message)
        _set(obj, "__dict__", kw)
        _set(obj, "__pydantic_fields_set__", set(kw))
        _set(obj, "__pydantic_extra__", {})
        _set(obj, "__pydantic_private__", None)
        return obj


_new = object.__new__
_set = object.__setattr__
_STATE = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def _direct(cls: Any, kw: dict[str, Any]) -> Any:
    """What ``cls.model_construct(**kw)`` builds when ``kw`` holds exactly its fields."""
    obj = _new(cls)
    _set(obj, "__dict__", kw)
    _set(obj, "__pydantic_fields_set__", set(kw))
    _set(obj, "__pydantic_extra__", {})
    _set(obj, "__pydantic_private__", None)
    return obj


def _same_state(a: Any, b: Any) -> bool:
    from pydantic import BaseModel

    if tuple(BaseModel.__slots__) != _STATE or type(a) is not type(b):
        return False
    return all(getattr(a, k) == getattr(b, k) for k in _STATE) and a == b


def _plain_classes() -> dict[tuple[str, str], _Plain]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_TYPES

    out: dict[tuple[str, str], _Plain] = {}
    for cls in (AIMessage, HumanMessage, SystemMessage):
        key = (cls.__module__, cls.__name__)
        deco = cls.__pydantic_decorators__
        validators = {
            *deco.validators,
            *deco.field_validators,
            *deco.root_validators,
            *deco.model_validators,
        }
        fields, audited = _AUDITED[cls.__name__]
        constrained = {k: repr(f.metadata) for k, f in cls.model_fields.items() if f.metadata}
        if (
            key not in SAFE_MSGPACK_TYPES
            or validators != audited
            or set(cls.model_fields) != fields
            or constrained != _AUDITED_CONSTRAINTS
            or cls.__pydantic_post_init__ is not None
            or cls.__private_attributes__
        ):
            continue  # not what was audited: the serializer's own path
        plain = _Plain(cls)
        if all(_agrees(plain, sample) for sample in _samples(cls)):
            out[key] = plain
    return out


# Field constraints the audit saw (an ``Annotated`` validator or another
# constraint on a field would be skipped by the cheap path: such a class is not taken).
_AUDITED_CONSTRAINTS = {"id": "[_PydanticGeneralMetadata(coerce_numbers_to_str=True)]"}


def _samples(cls: Any) -> list[dict[str, Any]]:
    """Dumped fields of ``cls`` with values a validator might normalize (spaces, lists).

    Set over a dump, not passed to the class: stored messages were dumped by
    whatever langchain-core wrote them, so what this one's validation would
    change must show here.
    """
    base = cls(content="x").model_dump()
    variants: list[dict[str, Any]] = [
        {"id": "i"},
        {"content": "  padded \n", "id": " i ", "name": " n "},
        {
            "content": ["a ", {"type": "text", "text": " b"}],
            "additional_kwargs": {"k": [1]},
            "response_metadata": {"m": " v "},
        },
    ]
    if "usage_metadata" in base:
        variants.append(
            {"usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}
        )
    return [{**base, **v} for v in variants]


def _agrees(plain: _Plain, dumped: dict[str, Any]) -> bool:
    """Whether the cheap build of ``dumped`` is what validating it builds (checked at first use).

    A langchain-core whose message classes normalize a value (strip, coerce)
    in a way the audit above cannot see fails here, and its messages take the
    serializer's path.
    """
    try:
        cheap = plain.build(dict(dumped))
        return cheap is not None and _same_state(cheap, plain.cls(**dumped))
    except Exception:
        return False


_PLAIN: dict[tuple[str, str], _Plain] | None = None


def _head(module: str, name: str) -> bytes:
    """How a pydantic ext payload of ``module.name`` starts, as LangGraph encodes it.

    A fixarray of 4 (module, name, fields, method), then the two strings. A
    payload that starts otherwise (another class, or the same strings encoded
    in a longer form) goes to the serializer's hook, undecoded here.
    """
    return b"\x94" + ormsgpack.packb(module) + ormsgpack.packb(name)


_NO_TOOL_CALLS = ormsgpack.packb("tool_calls") + ormsgpack.packb([])


class _NotPlain(Exception):
    """A nested ext value: the message is not plain."""


def _refuse_ext(code: int, data: bytes) -> Any:
    raise _NotPlain


def fast_ext_hook(fallback: Callable[[int, bytes], Any]) -> Callable[[int, bytes], Any]:
    """An ormsgpack ext hook: plain messages built here, everything else by ``fallback``.

    Args:
        fallback: The serializer's own ext hook (its allowlist and events).
    """
    global _PLAIN
    plain = _PLAIN
    if plain is None:
        plain = _PLAIN = _plain_classes()

    heads = tuple(_head(*key) for key in plain)
    ai_head = next((_head(*key) for key, p in plain.items() if p.ai), None)

    def hook(code: int, data: bytes) -> Any:
        # other classes are told from the payload's head, without decoding it,
        # and an AIMessage with tool calls by the bytes of an empty tool_calls
        # (a plain one has them; without, it would be decoded twice)
        if (
            code == _EXT_PYDANTIC_V2
            and data.startswith(heads)
            and (_NO_TOOL_CALLS in data or not data.startswith(ai_head or b"\x00"))
        ):
            try:
                # a plain message holds no ext value: the first one found sends the
                # whole message to ``fallback`` before anything nested was built
                # (built here and again there, nesting would cost its square)
                tup = ormsgpack.unpackb(data, ext_hook=_refuse_ext, option=_OPT)
                kind = plain.get((tup[0], tup[1])) if type(tup) is list and len(tup) == 4 else None
                value = kind.build(tup[2]) if kind is not None else None
            except Exception:
                value = None
            if value is not None:
                return value
        return fallback(code, data)

    return hook
