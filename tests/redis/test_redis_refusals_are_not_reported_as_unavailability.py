"""Redis: an error reply that is not about availability is never StorageUnavailableError.

A caller retrying on ``StorageUnavailableError`` must not retry forever on an
answer that does not change: a refused password (redis-py files it under
``ConnectionError``) and a key of the wrong type (``WRONGTYPE``) are
``StorageRefusedError`` with the reply's code; a server out of memory (it may
serve again) stays ``StorageUnavailableError``. On a server of the test's own,
sync and async. (A user without the permission, ``NOPERM``, and a dead server,
on both backends: ``tests/test_refusals_are_not_reported_as_unavailability.py``.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.asyncio as aredis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import StorageRefusedError, StorageUnavailableError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from tests.redis._own_server import OwnRedis

MODES = ["sync", "async"]
CONFIG: Any = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}


@pytest.fixture
def server() -> Iterator[OwnRedis]:
    own = OwnRedis(args=["--save", "", "--appendonly", "no"])
    own.start()
    yield own
    own.remove()


async def _put(server: OwnRedis, mode: str, **client: Any) -> Any:
    """One ``put`` through a saver whose client has ``client`` options.

    The client does not retry on its own (``retry=None``): the saver's answer
    comes at once, after its own attempts.
    """
    client["retry"] = None
    if mode == "sync":
        saver = RedisSaver(redis.Redis(port=server.port, **client), prefix="p")
        try:
            return saver.put(CONFIG, empty_checkpoint(), {}, {})
        finally:
            saver.client.close()
    asaver = AsyncRedisSaver(aredis.Redis(port=server.port, **client), prefix="p")
    try:
        return await asaver.aput(CONFIG, empty_checkpoint(), {}, {})
    finally:
        await asaver.client.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_password_is_not_unavailability(server: OwnRedis, mode: str) -> None:
    admin = redis.Redis(port=server.port)
    admin.execute_command("ACL", "SETUSER", "default", "on", ">s3cret")
    admin.close()
    for options in ({"password": "wrong"}, {}):
        with pytest.raises(StorageRefusedError) as refused:
            await _put(server, mode, **options)
        assert not isinstance(refused.value, StorageUnavailableError)
    # the right password works: the refusals were about the password only
    stored = await _put(server, mode, password="s3cret")
    assert stored["configurable"]["thread_id"] == "t1"


@pytest.mark.parametrize("mode", MODES)
async def test_a_key_of_the_wrong_type_is_refused_with_its_code(
    server: OwnRedis, mode: str
) -> None:
    admin = redis.Redis(port=server.port)
    for key in Keys("p").thread("t1"):
        admin.set(key, "not what the saver keeps here")
    admin.close()
    with pytest.raises(StorageRefusedError) as refused:
        await _put(server, mode)
    assert refused.value.code == "WRONGTYPE"  # from the failed command inside the script
    assert "WRONGTYPE" in str(refused.value)
    assert not isinstance(refused.value, StorageUnavailableError)


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_out_of_memory_is_unavailability(server: OwnRedis, mode: str) -> None:
    admin = redis.Redis(port=server.port)
    assert (await _put(server, mode))["configurable"]["thread_id"] == "t1"  # scripts loaded
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", "1")  # below what the server uses: every write is refused
    for _ in range(2):  # a script refused as it runs (loaded), and as it is sent (EVAL)
        with pytest.raises(StorageUnavailableError) as err:
            await _put(server, mode)
        assert "maxmemory" in str(err.value)
        admin.script_flush()
    admin.config_set("maxmemory", "0")
    admin.close()
    assert (await _put(server, mode))["configurable"]["thread_id"] == "t1"
