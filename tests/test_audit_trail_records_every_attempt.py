"""Every decision attempt, timeout, escalation, stale re-ask and undo lands in the audit trail."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from psycopg import sql

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    Escalate,
    NoPendingApproval,
    NotAuthorized,
    UnknownBatchItem,
    aapprove,
    aaudit_log,
    add_compensation,
    approve,
    audit_log,
    decide,
    pending_approvals,
    purge_audit,
    reject,
    request_approval,
    request_batch_approval,
    resume_undo,
)
from langgraph_durable.interrupts._records import fingerprint
from tests import _saga_graphs as g
from tests._approval_graphs import FakeClock, review_graph
from tests._approval_savers import (  # noqa: F401 - fixtures
    approval_saver,
    async_approval_saver,
    open_sync,
    saver_url,
)
from tests._backends import BACKENDS
from tests._parts import part_of

# ruff: noqa: F811 - the fixtures are parameters of the tests

REQUEST = {"action": "refund", "amount": 5}


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def story(entries: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.actor, e.action, e.outcome) for e in entries]


def test_a_refused_outsider_is_audited_and_an_approver_then_decides(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=("ops",))
    graph.invoke({"amount": 5}, cfg("t1"))
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t1"), by="mallory", roles=["sales"])
    assert [i.thread_id for i in pending_approvals(approval_saver)] == ["t1"]  # still waiting
    refused = audit_log(approval_saver, thread_id="t1")
    assert story(refused) == [
        ("run", "request", "waiting"),
        ("mallory", "approve", "not_authorized"),
    ]
    assert "not among the approvers" in (refused[1].reason or "") and "ops" in refused[1].reason

    approve(graph, cfg("t1"), by="olga", roles=["ops"])
    entries = audit_log(approval_saver, thread_id="t1")
    assert story(entries) == [
        ("run", "request", "waiting"),
        ("mallory", "approve", "not_authorized"),
        ("olga", "approve", "recorded"),
    ]
    assert len({e.approval_id for e in entries}) == 1 and entries[0].approval_id
    # the payload is fingerprinted, never stored
    assert {e.fingerprint for e in entries} == {fingerprint(REQUEST)}
    assert "refund" not in json.dumps([e.model_dump(mode="json") for e in entries])
    assert [e.seq for e in entries] == sorted(e.seq for e in entries)
    # a late second decision is an attempt too
    with pytest.raises(AlreadyDecided):
        reject(graph, cfg("t1"), by="olga", roles=["ops"], approval_id=entries[0].approval_id)
    last = audit_log(approval_saver, thread_id="t1")[-1]
    assert (last.actor, last.action, last.outcome) == ("olga", "reject", "already_decided")
    assert "already decided by olga" in (last.reason or "")


def test_concurrent_deciders_leave_one_recorded_entry(approval_saver: Any) -> None:
    import threading

    graph = review_graph(approval_saver, approvers=("ops",))
    graph.invoke({"amount": 5}, cfg("race"))
    winners: list[str] = []
    losers: list[str] = []
    gate = threading.Barrier(8)

    def decide_as(who: str) -> None:
        gate.wait()
        try:
            approve(graph, cfg("race"), by=who)
            winners.append(who)
        except AlreadyDecided:
            losers.append(who)

    workers = [threading.Thread(target=decide_as, args=(f"u{i}",)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(winners) == 1 and len(losers) == 7
    entries = audit_log(approval_saver, thread_id="race")
    recorded = [e.actor for e in entries if e.outcome == "recorded"]
    refused = sorted(e.actor for e in entries if e.outcome == "already_decided")
    assert recorded == winners and refused == sorted(losers)
    assert all(
        f"already decided by {winners[0]}" in (e.reason or "")
        for e in entries
        if e.outcome == "already_decided"
    )


def test_the_requester_refusal_is_audited(approval_saver: Any) -> None:
    def review(state: dict[str, Any]) -> dict[str, Any]:
        d = request_approval(REQUEST, forbid=["requester"])
        return {"amount": 1 if d.approved else 0}

    b = StateGraph(dict)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    graph = b.compile(checkpointer=approval_saver)
    graph.invoke({"amount": 9}, cfg("t2", requested_by="rita"))
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t2"), by="rita")
    approve(graph, cfg("t2"), by="sam")
    entries = audit_log(approval_saver, thread_id="t2")
    assert story(entries) == [
        ("rita", "request", "waiting"),
        ("rita", "approve", "not_authorized"),
        ("sam", "approve", "recorded"),
    ]
    assert "separation of duties" in (entries[1].reason or "")


def test_batch_attempts_are_audited_per_item(approval_saver: Any) -> None:
    graph = g_batch(approval_saver)
    graph.invoke({}, cfg("t3"))
    with pytest.raises(NotAuthorized):
        decide(graph, cfg("t3"), {"a": True}, by="eve")
    with pytest.raises(UnknownBatchItem):
        decide(graph, cfg("t3"), {"zz": True}, by="olga", roles=["ops"])
    decide(graph, cfg("t3"), {"a": True}, by="olga", roles=["ops"])
    out = decide(graph, cfg("t3"), {"a": False, "b": False}, by="oscar", roles=["ops"])
    assert out.applied == ["b"] and out.completed
    entries = audit_log(approval_saver, thread_id="t3")
    trail = [(e.actor, e.action, e.item, e.outcome) for e in entries]
    assert trail[:4] == [
        ("run", "request", None, "waiting"),
        ("eve", "decide", None, "not_authorized"),
        ("olga", "decide", None, "unknown_item"),
        ("olga", "approve", "a", "recorded"),
    ]
    # the items of one decide call are compare-and-set concurrently: no defined order
    assert sorted(trail[4:], key=lambda t: str(t[2])) == [
        ("oscar", "reject", "a", "already_decided"),
        ("oscar", "reject", "b", "recorded"),
    ]
    assert entries[3].fingerprint == fingerprint({"id": "a"})


def test_an_attempt_on_a_batch_decided_before_is_audited(approval_saver: Any) -> None:
    graph = g_batch(approval_saver)
    graph.invoke({}, cfg("t3b"))
    done = decide(graph, cfg("t3b"), {"a": True, "b": True}, by="olga", roles=["ops"])
    assert done.completed
    # named by its id (a decider's stale page), the batch is no longer pending
    with pytest.raises(AlreadyDecided) as err:
        decide(graph, cfg("t3b"), {"a": False}, by="pat", roles=["ops"], batch_id=done.batch_id)
    assert err.value.decision["by"] == "olga"
    entries = audit_log(approval_saver, thread_id="t3b")
    last = entries[-1]
    assert (last.actor, last.action, last.approval_id, last.item, last.outcome) == (
        "pat",
        "decide",
        done.batch_id,
        None,
        "already_decided",
    )
    assert last.reason is not None and "already decided by olga" in last.reason
    with pytest.raises(NoPendingApproval):  # an id never seen is no refusal: not audited
        decide(graph, cfg("t3b"), {"a": False}, by="pat", roles=["ops"], batch_id="nope")
    assert len(audit_log(approval_saver, thread_id="t3b")) == len(entries)


def g_batch(saver: Any) -> Any:
    """``review`` asks for a batch of two items ``a`` and ``b``, for ``ops``."""

    def review(state: dict[str, Any]) -> dict[str, Any]:
        res = request_batch_approval(
            [{"id": "a"}, {"id": "b"}], key=lambda o: o["id"], approvers=["ops"]
        )
        return {"approved": [o["id"] for o in res.approved]}

    b = StateGraph(dict)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


def test_a_batch_timeout_is_audited_per_open_item(approval_saver: Any) -> None:
    clock = FakeClock()

    def review(state: dict[str, Any]) -> dict[str, Any]:
        res = request_batch_approval(
            [{"id": "a"}, {"id": "b"}],
            key=lambda o: o["id"],
            timeout=timedelta(hours=1),
            on_timeout="reject",
        )
        return {"timed_out": res.timed_out}

    b = StateGraph(dict)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    graph = b.compile(checkpointer=approval_saver)
    graph.invoke({}, cfg("t8", __durable_clock__=clock))
    decide(graph, cfg("t8"), {"a": True}, by="olga", clock=clock)
    clock.advance(timedelta(hours=2))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    entries = audit_log(approval_saver, thread_id="t8")
    assert [(e.actor, e.action, e.item, e.outcome) for e in entries] == [
        ("run", "request", None, "waiting"),
        ("olga", "approve", "a", "recorded"),
        ("system", "reject", "b", "recorded"),
    ]
    assert (entries[2].reason or "").startswith("on_timeout=reject; deadline ")


def test_a_stale_reask_is_audited_once(approval_saver: Any) -> None:
    amounts = itertools.count(1)

    def review(state: dict[str, Any]) -> dict[str, Any]:
        # the payload changes every time the node runs: the decision goes stale once
        d = request_approval({"amount": min(next(amounts), 2)})
        return {"by": d.by}

    b = StateGraph(dict)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    graph = b.compile(checkpointer=approval_saver)
    graph.invoke({}, cfg("t4"))
    approve(graph, cfg("t4"), by="ann")  # decided amount 1; the node now computes 2
    approve(graph, cfg("t4"), by="bob")  # decided amount 2: done
    entries = audit_log(approval_saver, thread_id="t4")
    assert story(entries) == [
        ("run", "request", "waiting"),
        ("ann", "approve", "recorded"),
        ("system", "reask", "stale"),
        ("run", "request", "waiting"),
        ("bob", "approve", "recorded"),
    ]
    assert entries[2].fingerprint == fingerprint({"amount": 1})
    assert fingerprint({"amount": 2}) in (entries[2].reason or "")


def _story_graph(saver: Any) -> Any:
    def review(state: g.OrderState) -> dict[str, Any]:
        request_approval(
            {"refund": state["charge_id"]},
            approvers=["ops"],
            timeout=timedelta(minutes=15),
            on_timeout=Escalate(to="manager", timeout=timedelta(hours=1), then="reject"),
            on_reject="compensate",
        )
        return {}

    builder = g.reviewed_order(review, ship_retry=RetryPolicy(max_attempts=1))
    return add_compensation(builder, sleep=lambda s: None).compile(checkpointer=saver)


def test_the_full_story_is_audited_in_order(approval_saver: Any) -> None:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    clock = FakeClock()
    graph = _story_graph(approval_saver)
    config = cfg("story", __durable_clock__=clock, requested_by="rita")
    graph.invoke({"order_id": "o1", "amount": 3}, config)
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("story"), by="mallory", clock=clock)
    clock.advance(timedelta(minutes=16))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1  # escalated
    approve(graph, cfg("story"), by="mia", roles=["manager"], clock=clock)
    # ship failed after the approval: the saga undid the charge and the reservation
    assert graph.get_state(cfg("story")).values["saga"]["status"] == "compensated"
    entries = audit_log(approval_saver, thread_id="story")
    assert story(entries) == [
        ("rita", "request", "waiting"),
        ("mallory", "approve", "not_authorized"),
        ("system", "escalate", "recorded"),
        ("rita", "request", "waiting"),
        ("mia", "approve", "recorded"),
        ("system", "undo", "compensated"),
        ("system", "undo", "compensated"),
    ]
    assert "on_timeout=escalate: asked manager at level 1" in (entries[2].reason or "")
    assert "asked manager at level 1" in (entries[3].reason or "")
    undos = entries[5:]
    assert all((e.reason or "").startswith("undo ") and " done " in (e.reason or "") for e in undos)
    assert "refund" in (undos[0].reason or "") and "release" in (undos[1].reason or "")
    assert len({e.item for e in undos}) == 2
    assert entries[0].approval_id != entries[3].approval_id  # the escalation is a new ask
    assert all(e.thread_id == "story" for e in entries)
    assert "ch_" not in json.dumps([e.model_dump(mode="json") for e in entries])


def test_a_failing_undo_and_its_answer_are_audited(approval_saver: Any) -> None:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    g.FAILING_UNDOS.add("refund")
    graph = g.build_order_graph(max_attempts=2).compile(checkpointer=approval_saver)
    config = cfg("undo-fails")
    graph.invoke({"order_id": "o2", "amount": 7}, config)
    graph.invoke(
        resume_undo(
            "skip", by="ops-oncall", note="card ending 4111 refunded by hand: note-NOT-FOR-AUDIT"
        ),
        config,
    )
    g.FAILING_UNDOS.clear()
    entries = audit_log(approval_saver, thread_id="undo-fails")
    assert [(e.actor, e.action, e.outcome) for e in entries] == [
        ("system", "undo", "failed"),
        ("ops-oncall", "skip", "recorded"),
        ("system", "undo", "compensated"),
    ]
    assert entries[0].reason is not None and entries[0].reason.endswith(
        "failed after 2 attempt(s): ConnectionError"
    )
    assert entries[0].item == entries[1].item != entries[2].item
    # neither the exception message nor the operator's note is in the trail (a marker that
    # cannot turn up by chance in a timestamp, id or fingerprint)
    dumped = json.dumps([e.model_dump(mode="json") for e in entries])
    assert "unavailable" not in dumped and "NOT-FOR-AUDIT" not in dumped


def test_a_timeout_is_recorded_as_made_by_the_system(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, open_to_all=False, approvers=("ops",))
    graph.invoke({"amount": 5}, cfg("t5", __durable_clock__=clock))
    clock.advance(timedelta(minutes=16))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    last = audit_log(approval_saver, thread_id="t5")[-1]
    assert (last.actor, last.action, last.outcome) == ("system", "reject", "recorded")
    assert last.reason and last.reason.startswith("on_timeout=reject; deadline ")
    assert last.at == clock()


async def test_async_decisions_are_audited(async_approval_saver: Any) -> None:
    graph = review_graph(async_approval_saver, open_to_all=False, approvers=("ops",))
    await graph.ainvoke({"amount": 5}, cfg("a1"))
    with pytest.raises(NotAuthorized):
        await aapprove(graph, cfg("a1"), by="mallory")
    await aapprove(graph, cfg("a1"), by="olga", roles=["ops"])
    entries = await aaudit_log(async_approval_saver, thread_id="a1")
    assert story(entries)[-2:] == [
        ("mallory", "approve", "not_authorized"),
        ("olga", "approve", "recorded"),
    ]


async def test_an_async_node_audits_its_request(async_approval_saver: Any) -> None:
    async def review(state: dict[str, Any]) -> dict[str, Any]:
        d = request_approval(REQUEST, approvers=["ops"])
        return {"by": d.by}

    b = StateGraph(dict)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    graph = b.compile(checkpointer=async_approval_saver)
    await graph.ainvoke({}, cfg("a2", requested_by="rita"))
    await aapprove(graph, cfg("a2"), by="olga", roles=["ops"])
    entries = await aaudit_log(async_approval_saver, thread_id="a2")
    assert story(entries) == [("rita", "request", "waiting"), ("olga", "approve", "recorded")]


def test_delete_thread_keeps_the_audit_and_purge_removes_it(approval_saver: Any) -> None:
    graph = review_graph(approval_saver, open_to_all=False, approvers=("ops",))
    for t in ("keep", "gone"):
        graph.invoke({"amount": 5}, cfg(t))
        approve(graph, cfg(t), by="olga", roles=["ops"])
    approval_saver.delete_thread("gone")
    assert len(audit_log(approval_saver, thread_id="gone")) == 2  # the audit outlives it
    assert purge_audit(approval_saver, thread_id="gone") == 2
    assert audit_log(approval_saver, thread_id="gone") == []
    assert len(audit_log(approval_saver, thread_id="keep")) == 2
    assert graph.get_state(cfg("keep")).values["approved"] is True


@pytest.fixture
def pg_saver(pg_schema: tuple[str, str]) -> Any:
    from langgraph_durable.checkpointers.postgres import PostgresSaver

    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        yield saver, url, schema


def test_postgres_refuses_update_and_delete_of_audit_rows(pg_saver: Any) -> None:
    saver, url, schema = pg_saver
    graph = review_graph(saver, open_to_all=False, approvers=("ops",))
    graph.invoke({"amount": 5}, cfg("t6"))
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t6"), by="mallory")
    table = sql.Identifier(schema, "durable_audit")
    with psycopg.connect(url, autocommit=True) as conn:
        for stmt in (
            sql.SQL("UPDATE {} SET actor = 'olga' WHERE actor = 'mallory'").format(table),
            sql.SQL("DELETE FROM {} WHERE actor = 'mallory'").format(table),
            sql.SQL("DELETE FROM {}").format(table),
            sql.SQL("TRUNCATE {}").format(table),
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                conn.execute(stmt)
        # the purge setting names one thread: another thread's rows stay refused
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("SELECT set_config('langgraph_durable.audit_purge', 'other', true)")
            conn.execute(sql.SQL("DELETE FROM {} WHERE thread_id = 't6'").format(table))
        count = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()
    assert count == (2,)
    assert story(audit_log(saver, thread_id="t6"))[-1] == ("mallory", "approve", "not_authorized")


@pytest.fixture(params=BACKENDS)
def native_saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        yield saver


def test_a_decision_and_its_entry_are_one_atomic_unit(native_saver: Any) -> None:
    # a decision that loses the compare-and-set writes no "recorded" entry
    first = {
        "decision_id": "d1",
        "at": "2026-11-29T09:00:00+00:00",
        "by": "a",
        "approval_id": "x",
        "fingerprint": None,
    }
    entry = {
        "at": first["at"],
        "thread_id": "t7",
        "approval_id": "x",
        "actor": "a",
        "action": "approve",
        "outcome": "recorded",
    }
    part_of(native_saver, "decisions").record_decision(
        thread_id="t7", key="x", decision=first, audit=entry
    )
    second = {**first, "decision_id": "d2", "by": "b"}
    stored = part_of(native_saver, "decisions").record_decision(
        thread_id="t7", key="x", decision=second, audit={**entry, "actor": "b"}
    )
    assert stored["decision_id"] == "d1"
    assert [e["actor"] for e in part_of(native_saver, "audit").read_audit(thread_id="t7")] == ["a"]
    # entries from nodes carry a dedupe key: a re-run node appends nothing twice
    node = {**entry, "actor": "system", "action": "undo", "dedupe_key": "undo:s1"}
    part_of(native_saver, "audit").append_audit(entries=[node])
    part_of(native_saver, "audit").append_audit(entries=[node, {**node, "dedupe_key": "undo:s2"}])
    assert [e["dedupe_key"] for e in part_of(native_saver, "audit").read_audit(thread_id="t7")] == [
        None,
        "undo:s1",
        "undo:s2",
    ]


def test_redis_keeps_the_audit_in_a_stream_in_the_threads_slot(
    redis_prefix: tuple[str, str],
) -> None:
    import redis

    from langgraph_durable.checkpointers.redis import RedisSaver

    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        graph = review_graph(saver, open_to_all=False, approvers=("ops",))
        graph.invoke({"amount": 5}, cfg("r{1}"))
        with pytest.raises(NotAuthorized):
            approve(graph, cfg("r{1}"), by="mallory")
        client = redis.Redis.from_url(url)
        try:
            stream, seen = saver.core.keys.audit("r{1}")
            # one hash tag (so one cluster slot) for the audit keys and the thread's keys
            tags = {
                k[k.index("{") + 1 : k.index("}")]
                for k in [stream, seen, *saver.core.keys.thread("r{1}")]
            }
            assert client.type(stream) == b"stream" and client.xlen(stream) == 2
            assert tags == {"t:r%7B1%7D"}
            saver.delete_thread("r{1}")
            assert client.xlen(stream) == 2  # delete_thread keeps the audit
            assert purge_audit(saver, thread_id="r{1}") == 2
            assert client.exists(stream, seen) == 0
        finally:
            client.close()
