"""Concurrent appends to one thread never fork its audit chain; a purge keeps it verifiable.

The link of an entry is computed where it is appended, atomically with it
(Postgres: the append function holds the thread's head row locked; Redis: one
Lua script), so appends racing from many connections (threads, or tasks of an
event loop) end as one chain: positions 1..N, every link intact. A purge
removes the thread's entries and keeps the head as the base the entries
appended later chain from, counting what went.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from langgraph_durable.checkpointers import audit_entry
from langgraph_durable.interrupts import (
    aaudit_log,
    apurge_audit,
    audit_log,
    averify_audit,
    purge_audit,
    verify_audit,
)
from tests._approval_graphs import T0
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._parts import part_of


def _entry(thread: str, actor: str, **extra: Any) -> dict[str, Any]:
    return audit_entry(
        at=T0, thread_id=thread, actor=actor, action="approve", outcome="not_authorized", **extra
    )


@pytest.fixture(params=BACKENDS)
def native_saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        yield saver


@pytest.fixture(params=BACKENDS)
async def native_async_saver(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    url, options = saver_url(request, request.param)
    if request.param == "postgres":
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url, pool_size=8, **options) as saver:
            await saver.setup()
            yield saver
    else:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(url, **options) as saver:
            await saver.setup()
            yield saver


def test_racing_appends_and_decisions_from_threads_make_one_chain(native_saver: Any) -> None:
    workers, rounds = 8, 12
    gate = threading.Barrier(workers)
    errors: list[BaseException] = []

    def work(w: int) -> None:
        try:
            gate.wait()
            for r in range(rounds):
                if r % 3 == 2:  # a decision with its entry, in the decision's own statement
                    decision = {"decision_id": f"d{w}-{r}", "at": T0.isoformat(), "by": f"u{w}"}
                    part_of(native_saver, "decisions").record_decision(
                        thread_id="race",
                        key=f"k{w}-{r}",
                        decision=decision,
                        audit={**_entry("race", f"u{w}"), "outcome": "recorded"},
                    )
                else:
                    part_of(native_saver, "audit").append_audit(
                        entries=[_entry("race", f"u{w}"), _entry("side", f"u{w}")]
                    )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    race = verify_audit(native_saver, "race")
    assert race.intact, race.summary()
    # every round added one entry to "race"; two of three rounds one to "side"
    stored = len(audit_log(native_saver, thread_id="race"))
    assert race.entries == race.head_position == stored == workers * rounds
    side = verify_audit(native_saver, "side")
    assert side.intact and side.entries == workers * (rounds - rounds // 3)


async def test_racing_appends_from_tasks_make_one_chain(native_async_saver: Any) -> None:
    saver = native_async_saver
    await asyncio.gather(
        *(
            part_of(saver, "audit").aappend_audit(entries=[_entry("race", f"u{i}")])
            for i in range(40)
        ),
        *(
            part_of(saver, "audit").aappend_audit(
                entries=[_entry("race", "node", dedupe_key=f"once-{i % 5}")]
            )
            for i in range(20)
        ),
    )
    report = await averify_audit(saver, "race")
    assert report.intact, report.summary()
    assert report.entries == report.head_position == 45
    assert len(await aaudit_log(saver, thread_id="race")) == 45


def test_purge_keeps_the_chain_verifiable(native_saver: Any) -> None:
    part_of(native_saver, "audit").append_audit(
        entries=[_entry("t", "a"), _entry("t", "b"), _entry("keep", "c")]
    )
    head = verify_audit(native_saver, "t")
    assert purge_audit(native_saver, thread_id="t") == 2
    gone = verify_audit(native_saver, "t")
    assert gone.intact and gone.entries == 0 and gone.purged == 2 and gone.purged_at is not None
    # the head stays: later entries chain from it, positions go on
    assert (gone.head_position, gone.head_link) == (head.head_position, head.head_link)
    part_of(native_saver, "audit").append_audit(entries=[_entry("t", "d")])
    later = verify_audit(native_saver, "t")
    assert later.intact and later.entries == 1 and later.head_position == 3
    assert "2 purged" in later.summary()
    assert [e.actor for e in audit_log(native_saver, thread_id="t")] == ["d"]
    keep = verify_audit(native_saver, "keep")
    assert keep.intact and keep.entries == 1
    assert purge_audit(native_saver, thread_id="t") == 1
    assert verify_audit(native_saver, "t").purged == 3


async def test_async_purge_keeps_the_chain_verifiable(native_async_saver: Any) -> None:
    saver = native_async_saver
    await part_of(saver, "audit").aappend_audit(entries=[_entry("t", "a"), _entry("t", "b")])
    assert await apurge_audit(saver, thread_id="t") == 2
    await part_of(saver, "audit").aappend_audit(entries=[_entry("t", "c")])
    report = await averify_audit(saver, "t")
    assert report.intact and report.entries == 1 and report.purged == 2
    assert report.head_position == 3
