"""``from_conn_string`` on a server that is down fails at once, pool or not.

The default saver opens a pool, which connects in the background: without a
first connection made up front, a caller (the CLI's every command) waited on
the pool instead of hearing that nothing answers.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from tests._servers import free_port


def _down_url() -> str:
    return f"postgresql://postgres@127.0.0.1:{free_port()}/postgres?connect_timeout=5"


@pytest.mark.parametrize("pool_size", [4, None], ids=["pool", "one-connection"])
def test_sync_saver_on_a_server_down_raises_at_once(pool_size: int | None) -> None:
    started = time.monotonic()
    with (
        pytest.raises(psycopg.OperationalError, match=r"refused|failed"),
        PostgresSaver.from_conn_string(_down_url(), pool_size=pool_size),
    ):
        pass
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("pool_size", [4, None], ids=["pool", "one-connection"])
async def test_async_saver_on_a_server_down_raises_at_once(pool_size: int | None) -> None:
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError, match=r"refused|failed"):
        async with AsyncPostgresSaver.from_conn_string(_down_url(), pool_size=pool_size):
            pass
    assert time.monotonic() - started < 10
