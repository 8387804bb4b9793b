"""thread_id / checkpoint_ns are stored verbatim and isolated, or refused by name."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import InvalidConfigError, StorageUnavailableError


def _config(tid: str, ns: str = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}


async def test_awkward_ids_are_stored_and_isolated(saver) -> None:
    base = uuid.uuid4().hex
    ids = [
        f"{base}'quote",
        f"{base}''quote",
        f'{base}"dq',
        f"{base}%s",
        f"{base}%%s",
        f"{base}%(x)s",
        f"{base}\\",
        f"{base}é☃𝄞",
        f"{base}" + "x" * 900,
        f"{base}" + "é" * 450,
        f"{base}*?",
    ]
    for i, tid in enumerate(ids):
        for ns in ("", "child:1", "sub'ns%"):
            cp = empty_checkpoint()
            cp["channel_values"] = {"who": f"{i}/{ns}"}
            cp["channel_versions"] = {"who": saver.get_next_version(None, None)}
            await saver.aput(_config(tid, ns), cp, {"i": i}, cp["channel_versions"])
    for i, tid in enumerate(ids):
        for ns in ("", "child:1", "sub'ns%"):
            tup = await saver.aget_tuple(_config(tid, ns))
            assert tup.config["configurable"]["thread_id"] == tid
            assert tup.config["configurable"]["checkpoint_ns"] == ns
            assert tup.checkpoint["channel_values"]["who"] == f"{i}/{ns}"
        listed = [t async for t in saver.alist({"configurable": {"thread_id": tid}})]
        assert len(listed) == 3
    await saver.adelete_thread(ids[0])
    assert await saver.aget_tuple(_config(ids[0])) is None
    assert await saver.aget_tuple(_config(ids[1])) is not None


@pytest.mark.parametrize("field", ["thread_id", "checkpoint_ns"])
async def test_nul_in_an_id_is_refused_naming_the_field(saver, field) -> None:
    config = _config("t-" + uuid.uuid4().hex)
    config["configurable"][field] = "bad\x00id"
    with pytest.raises(InvalidConfigError) as err:
        await saver.aput(config, empty_checkpoint(), {}, {})
    assert err.value.field == field
    with pytest.raises(InvalidConfigError) as err:
        await saver.aget_tuple(config)
    assert err.value.field == field


@pytest.mark.parametrize("size", [1_025, 2_700, 10_000, 16_384])
@pytest.mark.parametrize("field", ["thread_id", "checkpoint_ns"])
async def test_a_long_id_is_stored_verbatim_or_refused_naming_the_field(saver, field, size) -> None:
    # random hex: the server cannot compress it into an index row
    long_id = secrets.token_hex(size)[:size]
    config = _config("t-" + uuid.uuid4().hex)
    config["configurable"][field] = long_id
    cp = empty_checkpoint()
    cp["channel_values"] = {"who": "long"}
    cp["channel_versions"] = {"who": saver.get_next_version(None, None)}
    try:
        stored = await saver.aput(config, cp, {}, cp["channel_versions"])
    except StorageUnavailableError as exc:  # a server limit is not unavailability
        raise AssertionError(f"a refused id was reported as unavailability: {exc}") from exc
    except InvalidConfigError as refused:
        assert refused.field == field
        assert "at most" in refused.reason  # the limit that applies
        assert await saver.aget_tuple(config) is None  # nothing was stored
        return
    tup = await saver.aget_tuple(stored)
    assert tup.config["configurable"][field] == long_id
    assert tup.checkpoint["channel_values"]["who"] == "long"
