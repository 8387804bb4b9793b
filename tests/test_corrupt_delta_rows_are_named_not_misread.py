"""Every one-byte corruption of a delta row is refused: as a broken chain, or by the decode.

A row whose bytes were damaged (a flipped bit, a truncation) must never reach
the saver as some other exception (a bare ``TypeError`` from a malformed meta
list), nor as a wrong value: the savers turn ``BrokenChainError`` and a refused
decode into a ``CorruptCheckpointError`` that names the thread, checkpoint and
channel.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.message import add_messages

from langgraph_durable.checkpointers import _delta_read
from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    BrokenChainError,
    DeltaPolicy,
    encode_value,
)
from langgraph_durable.checkpointers._serde import default_serde, loads_exact
from tests.test_delta_values_read_back_exactly import _writes

SERDE = default_serde()
POLICY = DeltaPolicy(min_size=0, ratio=50.0)


def _chain() -> tuple[dict[str, tuple[Any, ...]], dict[Any, Any], dict[str, tuple[str, bytes]]]:
    """A compact chain of 6 versions; two of every three steps' items are in their writes."""
    rows: dict[str, tuple[Any, ...]] = {}
    writes: dict[Any, Any] = {}
    expected: dict[str, tuple[str, bytes]] = {}
    value: list[Any] = []
    link = None
    for i in range(6):
        msg = (AIMessage if i % 2 else HumanMessage)(content=f"m{i}-" + "x" * (7 * i), id=f"id{i}")
        value = add_messages(value, [msg])
        version = f"{i + 1:032}.{0:016}"
        type_, data = SERDE.dumps_typed(value)
        refs = _writes(i, [value[-1]], uuid_ids=True) if i % 3 != 2 else []
        for r in refs:
            writes[(f"cp{i}", r.task_id, r.idx)] = (r.type, r.blob)
        stored, link = encode_value(
            link, version, type_, data, POLICY, writes=refs, writes_of=f"cp{i}", compact=True
        )
        rows[version] = (
            (stored.type, stored.blob, stored.base, f"cp{i}")
            if stored.type == DELTA_TYPE
            else (stored.type, stored.blob, None, None)
        )
        expected[version] = (type_, data)
    return rows, writes, expected


def test_a_damaged_delta_byte_is_refused_as_a_broken_chain() -> None:
    rows, writes, expected = _chain()
    deltas = [v for v, row in rows.items() if row[0] == DELTA_TYPE]
    assert len(deltas) >= 4
    refused = 0
    misread: list[tuple[tuple[str, bytes], tuple[str, bytes]]] = []
    for v in deltas:
        blob = rows[v][1]
        damaged = [blob[:k] for k in range(len(blob))]
        damaged += [
            blob[:p] + bytes([blob[p] ^ x]) + blob[p + 1 :]
            for p in range(len(blob))
            for x in (0x01, 0x80, 0xFF)
        ]
        for bad in damaged:
            reader = _delta_read.ChainReader(
                {**rows, v: (rows[v][0], bad, *rows[v][2:])}, writes, POLICY
            )
            for version in reversed(list(rows)):  # newest first, as a history reads
                try:
                    got = reader.read(version)[:2]
                except BrokenChainError:
                    refused += 1
                    continue
                if got != expected[version]:
                    misread.append((got, expected[version]))
    assert refused > 0
    # The one damage the chain's checksum does not see is the value's container
    # header, kept in the meta beside the checksummed body; the decode refuses
    # it (the value must end where its bytes end), so no damage reads back.
    assert misread
    for (type_, data), (want_type, want) in misread:
        assert type_ == want_type and data[1:] == want[1:] and data[0] != want[0]
        with pytest.raises(ValueError):
            loads_exact(SERDE, type_, data, rebuilt=True)
