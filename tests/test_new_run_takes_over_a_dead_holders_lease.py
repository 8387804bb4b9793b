"""A new run takes over a lease whose holder is dead or silent, sync and async savers.

The holder's death is real: its owner id names the pid of a process that has
exited (same host), or a holder on another host that has not renewed for 2/3
of its lease. A holder on another host with a fresh heartbeat is left alone:
the new run goes on unleased and, once it has finished, the record still
names the live holder.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langgraph_durable.checkpointers._leases import RELEASED, RUNNING
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver
from langgraph_durable.interrupts import thread_state
from tests._backends import BACKENDS, POSTGRES
from tests._lease_support import (
    builder,
    dead_holder_owner,
    expected_final,
    leasing_saver,
    settings,
    where_of,
)
from tests._parts import part_of

TTL = timedelta(seconds=30)


def _holders() -> dict[str, tuple[str, timedelta]]:
    """Holder owner id and the age of its last renewal, per case."""
    return {
        "dead-pid": (dead_holder_owner(), timedelta(0)),
        "silent": ("elsewhere:7:run:silent", timedelta(seconds=25)),
        "alive": ("elsewhere:8:run:alive", timedelta(seconds=1)),
    }


def _check(case: str, holder: str, record: Any, token: int) -> None:
    if case == "alive":
        assert (record.state, record.owner, record.token) == (RUNNING, holder, token)
    else:
        assert (record.state, record.reason, record.token) == (RELEASED, "finished", token + 1)
        assert record.owner != holder and record.recoveries == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["dead-pid", "silent", "alive"])
def test_sync_run_takes_over_only_a_dead_holder(
    backend: str, case: str, request: pytest.FixtureRequest
) -> None:
    holder, age = _holders()[case]
    with leasing_saver(backend, where_of(backend, request), settings(30, 10)) as saver:
        graph = builder().compile(checkpointer=saver)
        held = part_of(saver, "leases").acquire_lease(
            thread_id="t", owner=holder, now=datetime.now(timezone.utc) - age, ttl=TTL
        )
        assert graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "t"}}) == (
            expected_final()
        )
        _check(case, holder, part_of(saver, "leases").get_lease(thread_id="t"), held.token)
        assert thread_state(saver, "t").state == "finished"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["dead-pid", "silent", "alive"])
async def test_async_run_takes_over_only_a_dead_holder(
    backend: str, case: str, request: pytest.FixtureRequest
) -> None:
    holder, age = _holders()[case]
    where = where_of(backend, request)
    if backend == POSTGRES:
        cm: Any = AsyncPostgresSaver.from_conn_string(
            where["url"], schema=where["schema"], leases=settings(30, 10)
        )
    else:
        cm = AsyncRedisSaver.from_conn_string(
            where["url"], prefix=where["prefix"], leases=settings(30, 10)
        )
    async with cm as saver:
        await saver.setup()
        graph = builder().compile(checkpointer=saver)
        held = await part_of(saver, "leases").aacquire_lease(
            thread_id="t", owner=holder, now=datetime.now(timezone.utc) - age, ttl=TTL
        )
        out = await graph.ainvoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "t"}})
        assert out == expected_final()
        _check(case, holder, await part_of(saver, "leases").aget_lease(thread_id="t"), held.token)
        saver.arun_leases.close()
