"""``forbid=["requester"]`` needs to know the requester, or it refuses to ask.

Without ``config["configurable"]["requested_by"]`` the rule would let everyone
decide, the requester too, so a run started without it gets ``InvalidInput``
saying the requester is unknown when it asks, before anything is asked (no
pending approval, no audit entry); so does a run whose requester cannot be
stored (a NUL, a lone surrogate). A run resumed by a decider or the sweeper
keeps the requester, and so does a run the recovery worker resumes after its
process died: its next request still refuses the requester. On every backend,
sync and async.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    InvalidInput,
    NotAuthorized,
    RecoveryWorker,
    approve,
    audit_log,
    pending_approvals,
    request_approval,
    request_batch_approval,
)
from tests import _approval_savers
from tests._backends import BACKENDS, POSTGRES
from tests._lease_support import where_of
from tests._parts import part_of

approval_saver = _approval_savers.approval_saver


class State(TypedDict, total=False):
    n: int
    by: list[str]


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def _review(state: State) -> dict[str, Any]:
    return {"by": [request_approval({"n": state.get("n", 0)}, forbid=["requester"]).by]}


def _review_batch(state: State) -> dict[str, Any]:
    res = request_batch_approval([{"id": "a"}], key=lambda o: o["id"], forbid=["requester"])
    return {"by": [d.by for d in res.decisions.values()]}


def _prepare(state: State) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1}


def graph_of(saver: Any, *nodes: Any) -> Any:
    """``START -> nodes... -> END``."""
    b = StateGraph(State)
    names = [f"n{i}" for i in range(len(nodes))]
    for name, node in zip(names, nodes, strict=True):
        b.add_node(name, node)
    for a, z in zip([START, *names], [*names, END], strict=True):
        b.add_edge(a, z)
    return b.compile(checkpointer=saver)


@pytest.mark.parametrize("node", [_review, _review_batch], ids=["approval", "batch"])
def test_forbidding_an_unknown_requester_is_refused_before_asking(
    approval_saver: Any, node: Any
) -> None:
    graph = graph_of(approval_saver, node)
    with pytest.raises(InvalidInput) as refused:
        graph.invoke({}, cfg("t1"))
    assert refused.value.parameter == "forbid"
    assert "requester is unknown" in str(refused.value)
    assert "requested_by" in str(refused.value)
    assert pending_approvals(approval_saver, thread_id="t1") == []
    assert audit_log(approval_saver, thread_id="t1") == []
    # the same run, told who asked, asks (and refuses that requester)
    graph.invoke(None, cfg("t1", requested_by="rita"))
    assert [i.thread_id for i in pending_approvals(approval_saver, thread_id="t1")] == ["t1"]


@pytest.mark.parametrize("node", [_review, _review_batch], ids=["approval", "batch"])
def test_a_requester_that_cannot_be_stored_is_refused_before_asking(
    approval_saver: Any, node: Any
) -> None:
    graph = graph_of(approval_saver, node)
    for who in ("ri\x00ta", "ri\ud800ta"):
        with pytest.raises(InvalidInput) as refused:
            graph.invoke({}, cfg("t4", requested_by=who))
        assert refused.value.parameter == "requested_by"
    assert pending_approvals(approval_saver, thread_id="t4") == []
    assert audit_log(approval_saver, thread_id="t4") == []


def test_a_resumed_run_keeps_its_requester_for_the_next_request(approval_saver: Any) -> None:
    graph = graph_of(approval_saver, _review, _review)
    graph.invoke({}, cfg("t2", requested_by="rita"))
    approve(graph, cfg("t2"), by="olga")  # the resume's config is olga's, not rita's
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t2"), by="rita")
    assert approve(graph, cfg("t2"), by="omar")["by"] == ["omar"]


@asynccontextmanager
async def _leasing_saver(backend: str, mode: str, where: dict[str, str]) -> AsyncIterator[Any]:
    if backend == POSTGRES:
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver

        if mode == "sync":
            with PostgresSaver.from_conn_string(where["url"], schema=where["schema"]) as saver:
                saver.setup()
                yield saver
        else:
            async with AsyncPostgresSaver.from_conn_string(
                where["url"], schema=where["schema"]
            ) as asaver:
                await asaver.setup()
                yield asaver
        return
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver

    if mode == "sync":
        with RedisSaver.from_conn_string(where["url"], prefix=where["prefix"]) as rsaver:
            rsaver.setup()
            yield rsaver
    else:
        async with AsyncRedisSaver.from_conn_string(
            where["url"], prefix=where["prefix"]
        ) as arsaver:
            await arsaver.setup()
            yield arsaver


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_recovered_run_keeps_its_requester(
    backend: str, mode: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    now = datetime.now(timezone.utc)
    async with _leasing_saver(backend, mode, where) as saver:
        # the dead run: it prepared, then its process died before the review
        # (its checkpoint says the review is next, its lease is left running)
        dead = graph_of(saver, _prepare, _review)
        config = cfg("t3", requested_by="rita")
        if mode == "sync":
            dead.invoke({"n": 0}, config, interrupt_after=["n0"])
            saver.run_leases.close()
        else:
            await dead.ainvoke({"n": 0}, config, interrupt_after=["n0"])
            saver.arun_leases.close()
    async with _leasing_saver(backend, mode, where) as saver:
        # whatever the dead run's lease says, one of a host long gone expired an hour ago
        taken = await _take_lease(saver, mode, now)
        assert taken is not None
        graph = graph_of(saver, _prepare, _review)
        worker = RecoveryWorker(graph, clock=lambda: now + timedelta(hours=2))
        report = worker.run_once() if mode == "sync" else await worker.arun_once()
        assert report.recovered == ["t3"]
        (item,) = (
            pending_approvals(saver, thread_id="t3")
            if mode == "sync"
            else await _apending(saver, "t3")
        )
        state = graph.get_state(cfg("t3")) if mode == "sync" else await graph.aget_state(cfg("t3"))
        assert state.interrupts[0].value["approval"]["requested_by"] == "rita"
        if mode == "sync":
            with pytest.raises(NotAuthorized):
                approve(graph, cfg("t3"), by="rita")
            assert approve(graph, cfg("t3"), by="olga")["by"] == ["olga"]
        assert item.thread_id == "t3"


async def _take_lease(saver: Any, mode: str, now: datetime) -> Any:
    """Leave ``t3`` leased by a dead host (an expired lease, as a SIGKILL leaves it)."""
    kwargs = {"thread_id": "t3", "now": now - timedelta(hours=1), "ttl": timedelta(seconds=1)}
    release = {"thread_id": "t3", "now": now - timedelta(hours=1), "reason": "interrupted"}
    if mode == "sync":
        held = part_of(saver, "leases").get_lease(thread_id="t3")
        if held is not None and held.state == "running":
            part_of(saver, "leases").release_lease(owner=held.owner, **release)
        return part_of(saver, "leases").acquire_lease(owner="gone-host:1:run:dead", **kwargs)
    held = await part_of(saver, "leases").aget_lease(thread_id="t3")
    if held is not None and held.state == "running":
        await part_of(saver, "leases").arelease_lease(owner=held.owner, **release)
    return await part_of(saver, "leases").aacquire_lease(owner="gone-host:1:run:dead", **kwargs)


async def _apending(saver: Any, thread_id: str) -> Any:
    from langgraph_durable.interrupts import apending_approvals

    return await apending_approvals(saver, thread_id=thread_id)
