"""copy_thread copies everything that belongs to the thread: checkpoints and writes, its
waits, approval decisions and claims, and activity results; the source is untouched."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from tests._parts import method_of
from tests.contract import SyncAsAsync

DEADLINE = datetime(2030, 1, 1, tzinfo=timezone.utc)


class State(TypedDict):
    decision: str


def _ask(state: State) -> dict[str, Any]:
    return {"decision": interrupt({WAIT_KEY: wait_marker("approval", DEADLINE), "ask": "pay?"})}


async def _call(saver: Any, name: str, **kwargs: Any) -> Any:
    """The async method of an async saver; the sync one (in a thread) of a sync saver."""
    if not isinstance(saver, SyncAsAsync):
        return await method_of(saver, "a" + name)(**kwargs)
    return await asyncio.to_thread(lambda: method_of(saver, name)(**kwargs))


async def test_copy_carries_decisions_claims_waits_and_activities(saver) -> None:
    source, target = f"s-{uuid.uuid4()}", f"c-{uuid.uuid4()}"
    b = StateGraph(State)
    b.add_node("ask", _ask)
    b.add_edge(START, "ask")
    b.add_edge("ask", END)
    graph = b.compile(checkpointer=saver)
    out = await graph.ainvoke({"decision": ""}, {"configurable": {"thread_id": source}})
    iid = out["__interrupt__"][0].id

    decided_at = datetime.now(timezone.utc)
    decision = {
        "v": 1,
        "approval_id": iid,
        "approved": True,
        "by": "alice",
        "at": decided_at.isoformat(),
    }
    item = {"v": 1, "approved": False, "by": "bob", "at": decided_at.isoformat()}
    await _call(saver, "record_decision", thread_id=source, key=iid, decision=decision)
    await _call(saver, "record_decision", thread_id=source, key="batch-1/item-a", decision=item)
    await _call(saver, "put_activity", thread_id=source, key="charge-7", value={"receipt": 42})

    await saver.acopy_thread(source, target)

    keys = [iid, "batch-1/item-a", "missing"]
    assert await _call(saver, "get_decisions", thread_id=target, keys=keys) == {
        iid: decision,
        "batch-1/item-a": item,
    }
    copied = await _call(saver, "get_activity", thread_id=target, key="charge-7")
    assert copied is not None and copied.thread_id == target and copied.value == {"receipt": 42}
    (wait,) = await method_of(saver, "alist_waits")(thread_id=target)
    assert (wait.thread_id, wait.interrupt_id, wait.info.deadline) == (target, iid, DEADLINE)
    # the copy's decision is its own first one: a later decider is told who won
    late = {**decision, "by": "mallory", "approved": False}
    won = await _call(saver, "record_decision", thread_id=target, key=iid, decision=late)
    assert won == decision

    # the decider's claim came along: a sweeper takes the copy's wait over only once
    # that claim is a lease old, exactly as on the source
    lease = timedelta(minutes=5)
    soon = await _call(
        saver,
        "claim_due_waits",
        now=decided_at + timedelta(minutes=1),
        owner="sweeper",
        lease=lease,
        limit=10,
    )
    assert {(e.thread_id, e.interrupt_id) for e in soon} & {(source, iid), (target, iid)} == set()
    later = await _call(
        saver,
        "claim_due_waits",
        now=decided_at + lease + timedelta(minutes=1),
        owner="sweeper",
        lease=lease,
        limit=100,
    )
    assert {(source, iid), (target, iid)} <= {(e.thread_id, e.interrupt_id) for e in later}

    # the copy is independent: deleting it leaves the source's records
    await saver.adelete_thread(target)
    assert await _call(saver, "get_decisions", thread_id=target, keys=keys) == {}
    assert await _call(saver, "get_activity", thread_id=target, key="charge-7") is None
    assert set(await _call(saver, "get_decisions", thread_id=source, keys=keys)) == {
        iid,
        "batch-1/item-a",
    }
    kept = await _call(saver, "get_activity", thread_id=source, key="charge-7")
    assert kept is not None and kept.value == {"receipt": 42}
