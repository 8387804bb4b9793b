"""Redis: opening a saver for a URL raises the library's errors, like every other call.

``from_conn_string`` asks the server whether it is a cluster (INFO) and, for a
cluster, connects to its nodes: a server that is down there is
``StorageUnavailableError``, a refused password ``StorageRefusedError``, both
naming ``from_conn_string``, never a raw redis-py error. On a server of the
test's own, sync and async, with the client kind asked of the server and with
a cluster client.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from langgraph_durable.checkpointers import StorageRefusedError, StorageUnavailableError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests.redis._own_server import OwnRedis

MODES = ["sync", "async"]
KINDS = [None, True]  # asked of the server (INFO cluster), a cluster client


@pytest.fixture
def server() -> Iterator[OwnRedis]:
    own = OwnRedis(args=["--save", "", "--appendonly", "no"])
    own.start()
    yield own
    own.remove()


async def _open(url: str, mode: str, cluster: bool | None) -> Any:
    """Open a saver for ``url`` and ping through its client."""
    if mode == "sync":
        with RedisSaver.from_conn_string(url, cluster=cluster) as saver:
            return saver.client.ping()
    async with AsyncRedisSaver.from_conn_string(url, cluster=cluster) as asaver:
        return await asaver.client.ping()


@pytest.mark.parametrize("cluster", KINDS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_server_that_is_down_is_unavailability(
    server: OwnRedis, mode: str, cluster: bool | None
) -> None:
    url = server.url
    server.stop()
    with pytest.raises(StorageUnavailableError) as err:
        await _open(url, mode, cluster)
    assert err.value.backend == "redis" and err.value.operation == "from_conn_string"
    assert "connect" in str(err.value).lower()


@pytest.mark.parametrize("cluster", KINDS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_password_is_a_refusal(
    server: OwnRedis, mode: str, cluster: bool | None
) -> None:
    admin = redis.Redis(port=server.port)
    admin.config_set("requirepass", "s3cret")
    admin.close()
    for url in (server.url, f"redis://:wrong@127.0.0.1:{server.port}/0"):
        with pytest.raises(StorageRefusedError) as refused:
            await _open(url, mode, cluster)
        assert refused.value.operation == "from_conn_string"
        assert not isinstance(refused.value, StorageUnavailableError)
        assert "wrong" not in str(refused.value) and "s3cret" not in str(refused.value)
    # the right password opens it (not a cluster: only the plain client then works)
    assert await _open(f"redis://:s3cret@127.0.0.1:{server.port}/0", mode, None)
