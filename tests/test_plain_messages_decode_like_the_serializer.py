"""Reads build plain messages without re-validating them, into exactly what the serializer builds.

``loads_exact`` rebuilds plain ``AIMessage``/``HumanMessage``/``SystemMessage``
objects itself (checkpointers/_fast_messages.py); everything else goes through
LangGraph's serializer. Over randomized messages (tool calls, usage details,
extra fields, list content, raw provider tool calls, other classes) the result
has the same type and pydantic state as ``serde.loads_typed`` builds, and
equals what was put; a blocked type nested in a plain message is still refused.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_durable.checkpointers._fast_messages import _plain_classes, fast_ext_hook
from langgraph_durable.checkpointers._serde import BlockedTypeError, default_serde, loads_exact

_STATE = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

text = st.text(max_size=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), text)
small_dict = st.dictionaries(text, scalars, max_size=3)
content = st.one_of(text, st.lists(st.one_of(text, small_dict), max_size=3))
tool_call = st.fixed_dictionaries(
    {"name": text, "args": small_dict, "id": st.one_of(st.none(), text)},
    # validation drops "extras" when it re-creates a tool call
    optional={"type": st.just("tool_call"), "extras": small_dict},
)
usage = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "input_tokens": st.integers(0, 9),
            "output_tokens": st.integers(0, 9),
            "total_tokens": st.integers(0, 9),
        },
        optional={"input_token_details": st.fixed_dictionaries({"cache_read": st.integers(0, 3)})},
    ),
)
raw_tool_calls = st.lists(
    st.fixed_dictionaries(
        {
            "id": text,
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": text, "arguments": st.just('{"a": 1}')}),
        }
    ),
    max_size=2,
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["ai", "human", "system", "tool"]))
    kw: dict[str, Any] = {"content": draw(content)}
    if draw(st.booleans()):
        kw["id"] = draw(text)
    if draw(st.booleans()):
        kw["name"] = draw(text)
    if draw(st.booleans()):
        kw["additional_kwargs"] = draw(small_dict)
    if draw(st.booleans()):
        kw["response_metadata"] = draw(small_dict)
    if draw(st.integers(0, 5)) == 0:
        kw["extra_field"] = draw(scalars)  # extra="allow": dumped as a field
    if kind == "ai":
        if draw(st.booleans()):
            kw["tool_calls"] = draw(st.lists(tool_call, max_size=2))
        if draw(st.booleans()):
            kw["usage_metadata"] = draw(usage)
        if draw(st.integers(0, 3)) == 0:
            kw.setdefault("additional_kwargs", {})["tool_calls"] = draw(raw_tool_calls)
        return AIMessage(**kw)
    if kind == "tool":
        return ToolMessage(tool_call_id=draw(text), **kw)
    return (HumanMessage if kind == "human" else SystemMessage)(**kw)


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    for attr in _STATE:
        assert getattr(a, attr) == getattr(b, attr), attr


def test_the_installed_message_classes_take_the_cheap_path() -> None:
    # the audit in _fast_messages matches this langchain-core and pydantic
    assert {name for _, name in _plain_classes()} == {"AIMessage", "HumanMessage", "SystemMessage"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), max_size=6))
def test_messages_decode_as_the_serializer_decodes_them(msgs: list[Any]) -> None:
    serde = default_serde()
    type_, data = serde.dumps_typed(msgs)
    ours = loads_exact(serde, type_, data)
    theirs = serde.loads_typed((type_, data))
    _same(ours, theirs)
    assert ours == theirs


def test_a_plain_message_reads_back_equal_and_skips_validation(monkeypatch) -> None:
    serde = default_serde()
    put = [
        AIMessage(content="hi", id="run-1"),
        AIMessage(
            content="x", usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
        ),
        HumanMessage(content=["a", {"type": "text", "text": "b"}], name="n"),
        SystemMessage(content="s", additional_kwargs={"k": [1, 2]}),
    ]
    type_, data = serde.dumps_typed(put)

    def no_init(self: Any, *a: Any, **k: Any) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(AIMessage, "__init__", no_init)
    monkeypatch.setattr(HumanMessage, "__init__", no_init)
    monkeypatch.setattr(SystemMessage, "__init__", no_init)
    got = loads_exact(serde, type_, data)
    assert got == put
    assert [type(m) for m in got] == [type(m) for m in put]


def test_a_blocked_type_inside_a_plain_message_is_refused() -> None:
    serde = default_serde()
    hostile = ormsgpack.Ext(0, ormsgpack.packb(["os", "system", "true"]))
    fields = AIMessage(content="hi").model_dump()
    fields["additional_kwargs"] = {"x": hostile}
    data = ormsgpack.packb(
        [
            ormsgpack.Ext(
                5,
                ormsgpack.packb(
                    ["langchain_core.messages.ai", "AIMessage", fields, "model_validate_json"]
                ),
            )
        ]
    )
    with pytest.raises(BlockedTypeError, match=r"os\.system"):
        loads_exact(serde, "msgpack", data)


def test_other_ext_codes_reach_the_serializers_hook() -> None:
    seen: list[int] = []

    def fallback(code: int, data: bytes) -> Any:
        seen.append(code)
        return ("fallback", code)

    hook = fast_ext_hook(fallback)
    data = ormsgpack.packb(
        [
            ormsgpack.Ext(0, ormsgpack.packb(["m", "n", 1])),
            ormsgpack.Ext(5, ormsgpack.packb(["m", "Unknown", {}, "x"])),
        ]
    )
    assert ormsgpack.unpackb(data, ext_hook=hook) == [("fallback", 0), ("fallback", 5)]
    assert seen == [0, 5]


class Counted:
    """An application type, allowlisted, nested in a message: built once per read."""

    def __init__(self, n: int) -> None:
        BUILT.append(n)
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counted) and other.n == self.n

    __hash__ = None  # type: ignore[assignment]


BUILT: list[int] = []


def _ext(code: int, *parts: Any) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb(list(parts), option=ormsgpack.OPT_NON_STR_KEYS))


def test_a_nested_object_in_a_message_is_built_once() -> None:
    # as LangGraph stores an object it rebuilds with cls(*args) (ext code 1),
    # nested in messages 30 deep: nesting must not cost its square, nor build
    # what is inside a message the cheap path hands to the serializer again
    serde = default_serde().with_msgpack_allowlist([(__name__, "Counted")])
    inner: Any = _ext(1, __name__, "Counted", [7])
    for i in range(30):
        fields = ToolMessage(f"level {i}", tool_call_id="c").model_dump()
        fields["artifact"] = inner
        inner = _ext(
            5, "langchain_core.messages.tool", "ToolMessage", fields, "model_validate_json"
        )
    data = ormsgpack.packb([inner], option=ormsgpack.OPT_NON_STR_KEYS)
    BUILT.clear()
    got = loads_exact(serde, "msgpack", data)
    assert BUILT == [7]
    assert got == serde.loads_typed(("msgpack", data))
    leaf = got[0]
    for _ in range(30):
        assert isinstance(leaf, ToolMessage)
        leaf = leaf.artifact
    assert leaf == Counted(7)


def test_a_serializer_whose_loads_is_wrapped_sees_every_read() -> None:
    serde = default_serde()
    seen: list[str] = []
    loads = serde.loads_typed

    def counting(data: tuple[str, bytes]) -> Any:
        seen.append(data[0])
        return loads(data)

    serde.loads_typed = counting  # type: ignore[method-assign]
    type_, data = serde.dumps_typed([AIMessage("hi", id="a")])
    assert loads_exact(serde, type_, data) == [AIMessage("hi", id="a")]
    assert seen == ["msgpack"]


def test_a_head_encoded_in_a_longer_form_reaches_the_serializer() -> None:
    # the cheap path recognises a class by the payload's first bytes as LangGraph
    # writes them; the same class written with a str8 module name is not
    # recognised, and the serializer builds it (the same message)
    serde = default_serde()
    fields = AIMessage(content="hi", id="a").model_dump()
    module = b"langchain_core.messages.ai"
    payload = (
        b"\x94"
        + b"\xd9"
        + bytes([len(module)])
        + module
        + ormsgpack.packb("AIMessage")
        + ormsgpack.packb(fields)
        + ormsgpack.packb("model_validate_json")
    )
    data = ormsgpack.packb([ormsgpack.Ext(5, payload)])
    seen: list[int] = []

    def fallback(code: int, data: bytes) -> Any:
        seen.append(code)
        return serde._unpack_ext_hook(code, data)  # type: ignore[attr-defined]

    hook = fast_ext_hook(fallback)
    got = ormsgpack.unpackb(data, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
    assert seen == [5]
    assert got == [AIMessage(content="hi", id="a")]
    assert loads_exact(serde, "msgpack", data) == got


def test_a_message_class_that_normalizes_values_is_not_taken() -> None:
    # a langchain-core whose HumanMessage strips its content on validation: a
    # stored message with spaces would read back unstripped through the cheap
    # path, so the first-use check refuses the class
    from typing import Annotated

    from pydantic import BeforeValidator

    from langgraph_durable.checkpointers._fast_messages import _agrees, _Plain, _samples

    class Stripping(HumanMessage):
        content: Annotated[str, BeforeValidator(lambda v: v.strip())]  # type: ignore[assignment]

    plain = _Plain(Stripping)
    assert not all(_agrees(plain, s) for s in _samples(Stripping))
    # the installed classes agree on every sample
    for cls in (AIMessage, HumanMessage, SystemMessage):
        assert all(_agrees(_Plain(cls), s) for s in _samples(cls))
