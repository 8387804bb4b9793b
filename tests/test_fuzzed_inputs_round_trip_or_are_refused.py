"""Hypothesis on both backends: hostile ids, namespaces, metadata and filters.

Thread ids, namespaces, metadata keys and values are drawn from text with NUL,
lone surrogates, emoji, quotes, SQL and JSON-path syntax, Redis glob
characters and hash-tag braces, plus 100 kB values. Every value either comes
back exactly or is refused with an ``InvalidConfigError`` naming the field;
``list(filter=...)`` with injection-shaped keys and values never returns a
checkpoint whose metadata does not match, nor another thread's checkpoint.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import InvalidConfigError
from tests import _durability as d
from tests._backends import BACKENDS

NASTY = [
    "a') OR 1=1 --",
    "'",
    "''",
    '"',
    "\\",
    "%s",
    "%(x)s",
    "$.a",
    "a.b",
    "a->b",
    "a->>'b'",
    "@>",
    "'; DROP TABLE checkpoints; --",
    "*",
    "?",
    "[a-z]*",
    "{t:x}",
    "}",
    "{",
    "\x00",
    "\ud800",
    "\udfff",
    "😀",
    "é☃𝄞",
    "\u2028",
    "step",
    " ",
    "",
]
ANY_CHAR = st.characters(codec=None, categories=None)  # includes surrogates and NUL
text = st.one_of(
    st.sampled_from(NASTY),
    st.text(ANY_CHAR, max_size=24),
    st.lists(st.sampled_from(NASTY), min_size=1, max_size=4).map("".join),
)
scalar = st.one_of(
    text,
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.just("x" * 100_000),
)
value = st.recursive(
    scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
)
# "schema_version" too: a key of the caller's reads back like any other
metadata = st.dictionaries(st.one_of(text, st.just("schema_version")), value, max_size=4)

# derandomized: the default run explores the same examples every time (no
# flaky CI); the slow variant below draws fresh ones
FUZZ = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
MANY = settings(FUZZ, max_examples=400, derandomize=False)


@pytest.fixture(params=BACKENDS)
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    url, area = d.storage_area(request.param, request)
    with d.open_saver(request.param, url, area) as s:
        yield s


def cfg(thread_id: str, ns: str = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def equal(a: Any, b: Any) -> bool:
    """Equality with NaN == NaN and tuples as lists (JSON-like metadata)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def round_trip_or_refused(
    saver: Any, thread: str, ns: str, md: dict[str, Any], channel_value: Any
) -> None:
    thread_id = f"{uuid.uuid4().hex}{thread}"
    cp = empty_checkpoint()
    cp["channel_values"] = {"v": channel_value}
    cp["channel_versions"] = {"v": saver.get_next_version(None, None)}
    try:
        saver.put(cfg(thread_id, ns), cp, md, cp["channel_versions"])
    except InvalidConfigError as exc:
        assert exc.field in (
            "thread_id",
            "checkpoint_ns",
            "metadata",
            "channel value",
            "checkpoint",
        ), exc
        assert exc.reason
        if exc.field not in ("thread_id", "checkpoint_ns"):
            assert saver.get_tuple(cfg(thread_id, ns)) is None  # refused: nothing stored
        return
    tup = saver.get_tuple(cfg(thread_id, ns))
    assert tup is not None
    assert tup.config["configurable"]["thread_id"] == thread_id
    assert tup.config["configurable"]["checkpoint_ns"] == ns
    assert equal(tup.checkpoint["channel_values"]["v"], channel_value)
    assert set(tup.metadata) == set(md)  # exactly what was put: no key of the saver's
    assert equal({k: tup.metadata[k] for k in md}, md), (tup.metadata, md)
    # a filter on exactly what was stored finds it, and only in its own thread
    listed = list(saver.list(cfg(thread_id, ns), filter=md))
    assert [t.config["configurable"]["checkpoint_id"] for t in listed] == [cp["id"]]


@pytest.fixture
def two_threads(saver: Any) -> tuple[Any, str, str]:
    mine, secret = f"mine-{uuid.uuid4().hex}", f"secret-{uuid.uuid4().hex}"
    for thread_id, md in (
        (mine, {"user": "alice", "step": 1}),
        (secret, {"user": "bob", "step": 1, "pwd": "s3cret"}),
    ):
        cp = empty_checkpoint()
        saver.put(cfg(thread_id), cp, md, {})
    return saver, mine, secret


def filters_never_leak(
    two_threads: tuple[Any, str, str], keys: list[str], values: list[Any]
) -> None:
    saver, mine, secret = two_threads
    flt = dict(zip(keys, values, strict=False))
    try:
        in_thread = list(saver.list(cfg(mine), filter=flt))
        everywhere = list(saver.list(None, filter=flt))
    except InvalidConfigError as exc:
        assert exc.field in ("filter", "metadata"), exc
        return
    assert all(t.config["configurable"]["thread_id"] == mine for t in in_thread)
    for tup in everywhere:
        md = tup.metadata
        assert all(k in md and equal(md[k], v) for k, v in flt.items()), (flt, md)
    # the stored data is intact after every attempt
    assert saver.get_tuple(cfg(secret)).metadata["pwd"] == "s3cret"


ROUND_TRIP = given(thread=text, ns=text, md=metadata, channel_value=value)
FILTERS = given(
    keys=st.lists(text, min_size=1, max_size=3),
    values=st.lists(value, min_size=3, max_size=3),
)
# a lone surrogate in a filter key once reached redis-py as a raw UnicodeEncodeError
SURROGATE_KEY = example(keys=["\ud800"], values=["a') OR 1=1 --"] * 3)

test_ids_metadata_and_values_round_trip_or_are_refused = FUZZ(ROUND_TRIP(round_trip_or_refused))
test_injection_shaped_filters_never_leak_other_threads = FUZZ(
    SURROGATE_KEY(FILTERS(filters_never_leak))
)
test_many_ids_metadata_and_values = pytest.mark.slow(MANY(ROUND_TRIP(round_trip_or_refused)))
test_many_injection_shaped_filters = pytest.mark.slow(MANY(FILTERS(filters_never_leak)))


@pytest.mark.parametrize(
    "pattern", ["mine*", "mine?*", "mine[-]*", "*", "?", "[m]*", "mine-\\*", "%", "_", ".*"]
)
def test_glob_and_like_patterns_in_a_thread_id_match_only_that_id(
    two_threads: tuple[Any, str, str], pattern: str
) -> None:
    saver, mine, secret = two_threads
    assert list(saver.list(cfg(pattern))) == []
    assert saver.get_tuple(cfg(pattern)) is None
    saver.delete_thread(pattern)  # deleting a pattern deletes nothing else
    assert saver.get_tuple(cfg(mine)) is not None
    assert saver.get_tuple(cfg(secret)) is not None
