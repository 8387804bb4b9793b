"""Delta storage (langgraph_durable.checkpointers._delta) rebuilds exactly the value that was put.

Randomized histories (hypothesis) run the real reducers LangGraph uses
(``add_messages`` with ids, ``RemoveMessage`` and ``REMOVE_ALL_MESSAGES``,
``operator.add``) mixed with edits, in-place mutation, removals and
reordering, store every version through ``encode_value`` with the saver's
serde and read each back with ``decode_value``: the bytes are those of a full
write and the value is ``==`` to what was put.
"""

from __future__ import annotations

import copy
import operator
import os
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    BrokenChainError,
    DeltaPolicy,
    Link,
    Stored,
    WriteRef,
    delta_base,
    delta_writes,
    encode_value,
)
from langgraph_durable.checkpointers._delta_caches import ChainCache, WriteCache
from langgraph_durable.checkpointers._delta_read import ChainReader, decode_value, needed_versions
from langgraph_durable.checkpointers._serde import default_serde

SERDE = default_serde()
STATS: dict[str, int] = {}
# Small min_size so that short hypothesis values exercise deltas too.
POLICY = DeltaPolicy(min_size=0)


class Store:
    """Rows by version, as a backend keeps them for one channel."""

    def __init__(self, policy: DeltaPolicy = POLICY, *, copy_values: bool = True) -> None:
        self.policy = policy
        self.copy_values = copy_values
        self.rows: dict[str, tuple[str, bytes | None]] = {}
        self.links: dict[str, Link | None] = {}
        self.expected: dict[str, tuple[Any, tuple[str, bytes]]] = {}
        self.n = 0

    def put(self, value: Any, prev: Link | None) -> tuple[str, Stored]:
        self.n += 1
        version = f"{self.n:032}.{self.n % 7:016}"
        type_, data = SERDE.dumps_typed(value)
        stored, link = encode_value(prev, version, type_, data, self.policy)
        if stored.type == DELTA_TYPE:
            # a chain lies between its root and its head: backends fetch it by range
            assert stored.root is not None and stored.base is not None
            chain, cur = [], stored.base
            while cur is not None:
                chain.append(cur)
                cur = delta_base(*self.rows[cur])
            assert chain[-1] == stored.root
            assert all(stored.root <= v < version for v in chain)
        self.rows[version] = (stored.type, stored.blob)
        self.links[version] = link
        value = copy.deepcopy(value) if self.copy_values else value
        self.expected[version] = (value, (type_, data))
        STATS[stored.type] = STATS.get(stored.type, 0) + 1
        return version, stored

    def check(self, version: str) -> Link | None:
        value, (type_, data) = self.expected[version]
        got_type, got_data, link = decode_value(version, self.rows, self.policy)
        assert (got_type, got_data) == (type_, data)
        got = SERDE.loads_typed((got_type, got_data))
        assert got == value
        assert type(got) is type(value)
        return link


def _message(draw: st.DrawFn, n: int) -> Any:
    kind = draw(st.sampled_from(["human", "ai", "tool", "dict"]))
    content = draw(st.text(max_size=30)) + f"#{n}"
    with_id = draw(st.booleans())
    mid = f"m{n}" if with_id else None
    if kind == "human":
        return HumanMessage(content=content, id=mid)
    if kind == "ai":
        return AIMessage(content=content, id=mid)
    if kind == "tool":
        return ToolMessage(content=content, tool_call_id=f"c{n}", id=mid)
    return {"role": "user", "content": content, **({"id": mid} if mid else {})}


@st.composite
def message_history(draw: st.DrawFn) -> list[list[Any]]:
    """Successive values of an add_messages channel."""
    values: list[list[Any]] = []
    current: list[Any] = []
    n = 0
    for _ in range(draw(st.integers(1, 25))):
        op = draw(
            st.sampled_from(
                [
                    "append",
                    "append",
                    "append",
                    "replace",
                    "remove",
                    "remove_all",
                    "reorder",
                    "mutate",
                    "same",
                ]
            )
        )
        ids = [m.id for m in current]
        if op == "append":
            batch = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                batch.append(_message(draw, n))
            current = add_messages(current, batch)
        elif op == "replace" and ids:
            mid = draw(st.sampled_from(ids))
            n += 1
            current = add_messages(current, [AIMessage(content=f"edited {n}", id=mid)])
        elif op == "remove" and ids:
            current = add_messages(current, [RemoveMessage(id=draw(st.sampled_from(ids)))])
        elif op == "remove_all":
            n += 1
            current = add_messages(
                current, [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(f"fresh {n}")]
            )
        elif op == "reorder" and len(current) > 1:
            current = draw(st.permutations(current))
        elif op == "mutate" and current:
            # A node that edits a stored message in place and returns the list.
            i = draw(st.integers(0, len(current) - 1))
            current = list(current)
            current[i].content = f"{current[i].content}!"
        values.append(current)
    return values


ints = st.integers(-(2**63), 2**63 - 1)
plain_items = st.one_of(
    ints,
    st.text(max_size=10),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.lists(ints, max_size=3),
    st.dictionaries(st.text(max_size=3), ints, max_size=2),
)


@st.composite
def list_history(draw: st.DrawFn) -> list[Any]:
    """Successive values of an operator.add list (and of a growing dict)."""
    use_dict = draw(st.booleans())
    values: list[Any] = []
    current: Any = {} if use_dict else []
    for _ in range(draw(st.integers(1, 30))):
        op = draw(st.sampled_from(["append", "append", "append", "edit", "remove", "reorder"]))
        if use_dict:
            current = dict(current)
            if op == "append":
                current.update(draw(st.dictionaries(st.text(max_size=4), plain_items, max_size=3)))
            elif op == "edit" and current:
                current[draw(st.sampled_from(sorted(current)))] = draw(plain_items)
            elif op == "remove" and current:
                del current[draw(st.sampled_from(sorted(current)))]
            elif op == "reorder":
                current = dict(reversed(list(current.items())))
        else:
            if op == "append":
                current = operator.add(current, draw(st.lists(plain_items, max_size=3)))
            elif op == "edit" and current:
                current = list(current)
                current[draw(st.integers(0, len(current) - 1))] = draw(plain_items)
            elif op == "remove" and current:
                current = list(current)
                del current[draw(st.integers(0, len(current) - 1))]
            elif op == "reorder":
                current = list(reversed(current))
        values.append(current)
    return values


def _run(values: list[Any], data: st.DataObject, policy: DeltaPolicy = POLICY) -> Store:
    store = Store(policy)
    last: Link | None = None
    versions: list[str] = []
    for value in values:
        # Where the next put's base comes from: the cache (previous version),
        # a read of an older version (fork / another process), or nothing.
        source = data.draw(st.sampled_from(["cache", "cache", "cache", "fork", "miss", "read"]))
        prev: Link | None
        if source == "cache" or not versions:
            prev = last
        elif source == "fork":
            prev = store.links[data.draw(st.sampled_from(versions))]
        elif source == "read":
            prev = store.check(data.draw(st.sampled_from(versions)))
        else:
            prev = None
        version, _ = store.put(value, prev)
        versions.append(version)
        last = store.links[version]
    for version in versions:
        store.check(version)
    return store


settings.register_profile("delta", deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXAMPLES = int(os.environ.get("DELTA_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_history(), st.data())
def test_message_histories_read_back_exactly(values: list[list[Any]], data: st.DataObject) -> None:
    _run(values, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(list_history(), st.data(), st.sampled_from([0.5, 4.0, 1000.0]), st.sampled_from([None, 2]))
def test_list_and_dict_histories_read_back_exactly(
    values: list[Any], data: st.DataObject, ratio: float, max_depth: int | None
) -> None:
    _run(values, data, DeltaPolicy(ratio=ratio, max_depth=max_depth, min_size=0, row_cost=8))


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(message_history(), st.data())
def test_kept_versions_stay_readable_after_dropping_what_they_do_not_need(
    values: list[list[Any]], data: st.DataObject
) -> None:
    store = _run(values, data)
    versions = sorted(store.rows)
    kept = data.draw(st.lists(st.sampled_from(versions), min_size=1, max_size=3))
    bases = {v: delta_base(*row) for v, row in store.rows.items()}
    needed = needed_versions(kept, bases)
    store.rows = {v: r for v, r in store.rows.items() if v in needed}
    for v in kept:
        store.check(v)


def _ai(i: int) -> AIMessage:
    return AIMessage(content=os.urandom(512).hex(), id=f"id-{i}")


def test_appends_are_stored_as_deltas_that_hold_only_the_new_items() -> None:
    store = Store(DeltaPolicy())
    value: list[Any] = []
    link = None
    kinds = []
    for i in range(50):
        value = add_messages(value, [_ai(i)])
        version, stored = store.put(value, link)
        link = store.links[version]
        kinds.append(stored.type)
        if stored.type == DELTA_TYPE:
            assert len(stored.blob) < 1400  # one message plus a small header
            assert stored.base is not None
    assert kinds.count(DELTA_TYPE) > 40
    assert store.check(version) == link


def test_replacing_a_message_by_id_or_removing_one_stores_the_value_whole() -> None:
    store = Store(DeltaPolicy())
    value = add_messages([], [_ai(i) for i in range(5)])
    v0, _ = store.put(value, None)
    for change in (
        [AIMessage(content="new text", id="id-4")],  # replace the last by id
        [AIMessage(content=value[4].content, id="id-4", name="x")],  # same text, new field
        [RemoveMessage(id="id-4")],
        [RemoveMessage(id="id-0")],
    ):
        changed = add_messages(value, change)
        _, stored = store.put(changed, store.links[v0])
        assert stored.type == "msgpack"
    reordered = [value[1], value[0], *value[2:]]
    _, stored = store.put(reordered, store.links[v0])
    assert stored.type == "msgpack"
    # In-place edit of an item of the stored version: the cache holds bytes,
    # so the stale base is detected.
    value[0].content = "edited in place"
    grown = add_messages(value, [_ai(9)])
    v, stored = store.put(grown, store.links[v0])
    assert stored.type == "msgpack"
    store.check(v)


def test_storage_of_an_append_only_history_grows_linearly() -> None:
    store = Store(DeltaPolicy(), copy_values=False)
    value: list[Any] = []
    link = None
    for i in range(400):
        value = [*value, _ai(i)]
        version, _ = store.put(value, link)
        link = store.links[version]
    payload = sum(len(SERDE.dumps_typed(m)[1]) for m in value)
    stored = sum(len(b or b"") for _, b in store.rows.values())
    assert stored < 3.2 * payload, stored / payload
    assert store.check(version) is not None


def test_a_missing_base_raises_broken_chain() -> None:
    store = Store(DeltaPolicy(min_size=0, ratio=100))
    v1, _ = store.put([1, 2, 3], None)
    v2, stored = store.put([1, 2, 3, 4], store.links[v1])
    assert stored.type == DELTA_TYPE
    del store.rows[v1]
    with pytest.raises(BrokenChainError):
        decode_value(v2, store.rows)
    store.rows[v1] = (DELTA_TYPE, b"\x07garbage")
    with pytest.raises(BrokenChainError):
        decode_value(v2, store.rows)


def test_cache_is_bounded_and_forgets_threads() -> None:
    cache = ChainCache(max_bytes=3000)
    for i in range(5):
        cache.put(f"t{i}", "", "messages", Link(f"{i}", "msgpack", b"\x91", b"x" * 1000))
    assert cache.get("t0", "", "messages") is None
    assert cache.get("t4", "", "messages") is not None
    cache.forget("t4")
    assert cache.get("t4", "", "messages") is None
    assert cache.get("t3", "", "messages") is not None


def test_randomized_histories_above_did_store_deltas() -> None:
    # Guards the hypothesis tests against passing vacuously.
    STATS.clear()
    test_message_histories_read_back_exactly()
    assert STATS.get(DELTA_TYPE, 0) > 100, STATS
    STATS.clear()
    test_list_and_dict_histories_read_back_exactly()
    assert STATS.get(DELTA_TYPE, 0) > 100, STATS


def test_a_base_rewritten_in_place_is_detected_not_mixed_in() -> None:
    # An upgrade that rewrote a stored version in place must not yield a value
    # made of the new base and the old delta's items.
    store = Store(DeltaPolicy(min_size=0, ratio=100))
    v1, _ = store.put(["a", "b"], None)
    v2, stored = store.put(["a", "b", "c"], store.links[v1])
    assert stored.type == DELTA_TYPE
    store.rows[v1] = SERDE.dumps_typed(["A", "b"])
    with pytest.raises(BrokenChainError):
        decode_value(v2, store.rows)


# -- deltas that refer to pending writes (format 2) --------------------------


def _writes(
    step: int, items: list[Any], task: str = "task", *, uuid_ids: bool = False
) -> list[WriteRef]:
    """Pending writes as put_writes stores them: one list per task."""
    type_, blob = SERDE.dumps_typed(items)
    task_id = f"{task}-{step}"
    if uuid_ids:
        task_id = str(uuid.uuid5(uuid.NAMESPACE_URL, task_id))
    return [WriteRef(task_id, 0, type_, blob)]


@given(values=message_history(), data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_deltas_that_refer_to_pending_writes_read_back_exactly(
    values: list[list[Any]], data: st.DataObject
) -> None:
    """Random histories whose steps' writes hold the new items, or other bytes, or nothing.

    Half of them in the compact format (base and writes_of beside the blob, task
    ids that are UUIDs packed to 16 bytes, as Postgres stores them).
    """
    store = Store()
    compact = data.draw(st.booleans())
    uuid_ids = compact and data.draw(st.booleans())
    rows4: dict[str, tuple[str, bytes | None, str | None, str | None]] = {}
    writes: dict[tuple[str, str, int], tuple[str, bytes | None]] = {}
    link = None
    prev: list[Any] = []
    for step, value in enumerate(values):
        new = value[len(prev) :] if value[: len(prev)] == prev else value
        kind = data.draw(st.sampled_from(["exact", "exact", "split", "other", "none"]))
        if kind == "exact":
            refs = _writes(step, new, uuid_ids=uuid_ids)
        elif kind == "split" and len(new) > 1:
            refs = _writes(step, new[:1], "a", uuid_ids=uuid_ids) + _writes(
                step, new[1:], "b", uuid_ids=uuid_ids
            )
        elif kind == "other":
            refs = _writes(step, [_message(data.draw, 9000 + step)], uuid_ids=uuid_ids)
        else:
            refs = []
        for w in refs:
            writes[(f"cp-{step}", w.task_id, w.idx)] = (w.type, w.blob)
        store.n += 1
        version = f"{store.n:032}.{store.n % 7:016}"
        type_, raw = SERDE.dumps_typed(value)
        stored, link = encode_value(
            link,
            version,
            type_,
            raw,
            store.policy,
            writes=refs,
            writes_of=f"cp-{step}",
            compact=compact,
        )
        if stored.refs:
            STATS["refs"] = STATS.get("refs", 0) + 1
            key = "compact refs" if compact else "format 2 refs"
            STATS[key] = STATS.get(key, 0) + 1
            # the referenced items' bytes are not copied into the delta
            assert len(stored.blob) < len(raw) - sum(len(b) - 1 for _, _, b in stored.refs) + 64
            if not compact:
                assert delta_writes(stored.type, stored.blob) == (
                    f"cp-{step}",
                    [(t, i) for t, i, _ in stored.refs],
                )
        store.rows[version] = (stored.type, stored.blob)
        rows4[version] = (stored.type, stored.blob, stored.base, stored.writes_of)
        store.expected[version] = (copy.deepcopy(value), (type_, raw))
        prev = value
    rows: Any = rows4 if compact else store.rows
    for version, (value, (type_, raw)) in store.expected.items():
        got = decode_value(version, rows, store.policy, writes)
        assert got[:2] == (type_, raw)
        assert SERDE.loads_typed(got[:2]) == value
    # one reader for every version (as a history read shares chains), in both orders
    for order in (list(store.expected), list(reversed(store.expected))):
        reader = ChainReader(rows, writes, store.policy)
        for version in order:
            assert reader.read(version)[:2] == store.expected[version][1]
    if compact:
        # the fast walk (metas decoded in one call) takes every well-formed
        # compact chain itself, without falling back to the checked walk
        for version, (_, expected) in store.expected.items():
            reader = ChainReader(rows, writes, store.policy)
            assert reader._walk_compact(version)[:2] == expected


def test_a_delta_refers_to_the_write_instead_of_copying_it() -> None:
    first = add_messages([], [_ai(0)])
    type_, raw = SERDE.dumps_typed(first)
    _, link = encode_value(None, "v1", type_, raw)
    grown = add_messages(first, [_ai(1)])
    refs = _writes(1, [grown[-1]])
    type_, raw2 = SERDE.dumps_typed(grown)
    stored, _ = encode_value(link, "v2", type_, raw2, writes=refs, writes_of="cp")
    assert stored.type == DELTA_TYPE and stored.writes_of == "cp" and len(stored.refs) == 1
    assert len(stored.blob) < 200  # the 1 KiB message lives in the write only
    rows = {"v1": (type_, raw), "v2": (stored.type, stored.blob)}
    writes = {("cp", refs[0].task_id, 0): (refs[0].type, refs[0].blob)}
    assert decode_value("v2", rows, writes=writes)[1] == raw2
    # a referenced write that is gone: a broken chain, never a wrong value
    with pytest.raises(BrokenChainError, match="pending write"):
        decode_value("v2", rows, writes={})
    # a referenced write rewritten in place (other bytes of the same length)
    other = SERDE.dumps_typed([_ai(1)])[1]
    with pytest.raises(BrokenChainError, match="does not add up"):
        decode_value("v2", rows, writes={("cp", refs[0].task_id, 0): ("msgpack", other)})


def test_a_compact_chain_that_does_not_add_up_names_its_fault() -> None:
    first = add_messages([], [_ai(0)])
    type_, raw = SERDE.dumps_typed(first)
    _, link = encode_value(None, "v1", type_, raw)
    grown = add_messages(first, [_ai(1)])
    refs = _writes(1, [grown[-1]], uuid_ids=True)
    type_, raw2 = SERDE.dumps_typed(grown)
    stored, _ = encode_value(link, "v2", type_, raw2, writes=refs, writes_of="cp", compact=True)
    rows = {"v1": (type_, raw, None, None), "v2": (stored.type, stored.blob, "v1", "cp")}
    key = ("cp", refs[0].task_id, 0)
    assert ChainReader(rows, {key: (refs[0].type, refs[0].blob)}).read("v2")[1] == raw2
    with pytest.raises(BrokenChainError, match="pending write"):
        ChainReader(rows, {}).read("v2")
    other = SERDE.dumps_typed([_ai(1)])[1]
    with pytest.raises(BrokenChainError, match="does not add up"):
        ChainReader(rows, {key: ("msgpack", other)}).read("v2")
    with pytest.raises(BrokenChainError, match="malformed"):
        bad = {**rows, "v2": (stored.type, stored.blob[:8], "v1", "cp")}
        ChainReader(bad, {key: (refs[0].type, refs[0].blob)}).read("v2")


def test_write_cache_keeps_the_first_write_and_only_lists() -> None:
    cache = WriteCache(max_bytes=10_000)
    a = _writes(1, [_ai(1)])[0]
    b = WriteRef(a.task_id, 0, a.type, SERDE.dumps_typed([_ai(2)])[1])
    cache.add("t", "", "cp", [("messages", a)])
    cache.add("t", "", "cp", [("messages", b)])  # a retried task: the store keeps `a`
    assert cache.get("t", "", "cp", "messages") == [a]
    special = WriteRef("x", -1, *SERDE.dumps_typed([1]))
    scalar = WriteRef("y", 0, *SERDE.dumps_typed(5))
    cache.add("t", "", "cp2", [("__error__", special), ("n", scalar)])
    assert cache.get("t", "", "cp2", "__error__") == [] and cache.get("t", "", "cp2", "n") == []
    for i in range(20):  # bounded: old checkpoints go first
        cache.add("t", "", f"cp-{i}", [("messages", _writes(i, [_ai(i)])[0])])
    assert cache.get("t", "", "cp", "messages") == []
    assert cache.get("t", "", "cp-19", "messages")
    cache.forget("t")
    assert cache.get("t", "", "cp-19", "messages") == []


def test_randomized_histories_did_refer_to_writes() -> None:
    # Guards the write-reference hypothesis test against passing vacuously.
    STATS.clear()
    test_deltas_that_refer_to_pending_writes_read_back_exactly()
    assert STATS.get("refs", 0) > 50, STATS
    assert STATS.get("compact refs", 0) > 5, STATS
