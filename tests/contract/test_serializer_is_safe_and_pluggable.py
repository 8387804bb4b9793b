"""Strict msgpack by default, with_allowlist honoured, EncryptedSerializer works.

A type outside the allowlist is refused when it is written
(``UnreadableValueError``: nothing is stored), and stored bytes naming one are
never rebuilt: the read refuses them loudly (``CorruptCheckpointError`` naming
the channel and the type) instead of handing the node its raw fields as a dict
(LangGraph's strict msgpack alone would do that silently).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers import CorruptCheckpointError, UnreadableValueError


@dataclass
class Order:
    sku: str
    qty: int


class State(TypedDict):
    order: Order


class XorCipher:
    """A toy stream cipher: enough to prove the saver stores what the serde makes."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def _stream(self, n: int) -> bytes:
        out = b""
        counter = 0
        while len(out) < n:
            out += hashlib.sha256(self.key + counter.to_bytes(8, "big")).digest()
            counter += 1
        return out[:n]

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        stream = self._stream(len(plaintext))
        return "xor", bytes(a ^ b for a, b in zip(plaintext, stream, strict=True))

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        assert ciphername == "xor"
        return self.encrypt(ciphertext)[1]


def _cp(value: Any, saver: Any) -> tuple[Any, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"order": value}
    cp["channel_versions"] = {"order": saver.get_next_version(None, None)}
    return cp, cp["channel_versions"]


async def test_unlisted_types_are_not_rebuilt_unless_allowlisted(saver) -> None:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}", "checkpoint_ns": ""}}
    cp, versions = _cp(Order("x", 2), saver)
    # the saver does not store what it would refuse to read back
    with pytest.raises(UnreadableValueError) as unwritable:
        await saver.aput(config, cp, {}, versions)
    assert unwritable.value.channel == "order"
    assert unwritable.value.types == (f"{Order.__module__}.Order",)
    assert await saver.aget_tuple(config) is None
    # stored by a saver that allows the type, the bytes are refused on read
    allowed = saver.with_allowlist([(Order.__module__, "Order")])
    stored = await allowed.aput(config, cp, {}, versions)
    with pytest.raises(CorruptCheckpointError) as refused:
        await saver.aget_tuple(stored)
    assert refused.value.channel == "order"
    assert f"{Order.__module__}.Order" in refused.value.reason
    rebuilt = await allowed.aget_tuple(stored)
    assert rebuilt.checkpoint["channel_values"]["order"] == Order("x", 2)


async def test_a_graph_gets_its_types_back_only_through_the_allowlist(saver) -> None:
    b = StateGraph(State)
    b.add_node("n", lambda s: {"order": Order(s["order"].sku, s["order"].qty + 1)})
    b.add_edge(START, "n")
    b.add_edge("n", END)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    # LangGraph derives the allowlist at compile time only when
    # LANGGRAPH_STRICT_MSGPACK is set; otherwise the user passes it.
    allowed = b.compile(checkpointer=saver.with_allowlist([(Order.__module__, "Order")]))
    await allowed.ainvoke({"order": Order("y", 1)}, config)
    assert (await allowed.aget_state(config)).values["order"] == Order("y", 2)
    plain = b.compile(checkpointer=saver)
    with pytest.raises(CorruptCheckpointError, match="allowlist"):
        await plain.aget_state(config)


async def test_encrypted_serializer_stores_ciphertext_and_reads_back(saver_factory) -> None:
    serde = EncryptedSerializer(XorCipher(b"k" * 32), JsonPlusSerializer(pickle_fallback=False))
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}", "checkpoint_ns": ""}}
    async with saver_factory(serde=serde) as enc:
        cp, versions = _cp({"secret": "s3cr3t-value"}, enc)
        stored = await enc.aput(config, cp, {"step": 1}, versions)
        await enc.aput_writes(stored, [("order", {"secret": "w-s3cr3t"})], "task")
        tup = await enc.aget_tuple(stored)
        assert tup.checkpoint["channel_values"]["order"] == {"secret": "s3cr3t-value"}
        assert tup.pending_writes[0][2] == {"secret": "w-s3cr3t"}
    async with saver_factory() as plain:
        # a saver without the key cannot read the value back
        with pytest.raises(Exception):  # noqa: B017 - any refusal is fine, the data is not leaked
            tup = await plain.aget_tuple(stored)
            assert "s3cr3t" not in repr(tup.checkpoint["channel_values"])
            raise RuntimeError("read without the key")
