"""A sweep records a page's timeout decisions in one compare-and-set round trip.

Each decision still wins or loses on its own (a human decision already
recorded is kept and resumed with), and each decision the sweep stored has its
``system`` entry in the audit trail, exactly once.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    ApprovalSweeper,
    aaudit_log,
    approve,
    audit_log,
    pending_approvals,
)
from tests._approval_graphs import FakeClock, cfg, review_graph
from tests._approval_savers import (  # noqa: F401 - fixtures
    approval_saver,
    async_approval_saver,
    open_sync,
    saver_url,
)
from tests._backends import BACKENDS
from tests._parts import part_of

# ruff: noqa: F811 - the fixtures are parameters of the tests


def system_entries(entries: list[Any]) -> list[tuple[str, str]]:
    return [(e.action, e.outcome) for e in entries if e.actor == "system"]


class CountingSaver:
    """Counts the saver's decision calls; everything else is the real saver's."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.calls: list[tuple[str, int]] = []
        store = part_of(saver, "decisions")
        self._record_decision = store.record_decision
        self._record_decisions = store.record_decisions

    def record_decision(self, **kwargs: Any) -> Any:
        self.calls.append(("record_decision", 1))
        return self._record_decision(**kwargs)

    def record_decisions(self, **kwargs: Any) -> Any:
        self.calls.append(("record_decisions", len(kwargs["items"])))
        return self._record_decisions(**kwargs)

    def get_decisions(self, **kwargs: Any) -> Any:
        return part_of(self.saver, "decisions").get_decisions(**kwargs)

    def count_decisions(self, **kwargs: Any) -> Any:
        return part_of(self.saver, "decisions").count_decisions(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.saver, name)


def test_a_page_of_timeouts_is_one_call_and_each_is_audited(
    approval_saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver)
    for i in range(6):
        graph.invoke({"amount": i}, cfg(f"p{i}", clock))
    # a human decided p2 without resuming (an approval UI): it wins over the timeout
    approve(approval_saver, cfg("p2"), by="alice", roles=["ops"], resume=False, clock=clock)
    clock.advance(timedelta(minutes=16))
    sweeper = ApprovalSweeper(graph, clock=clock, page_size=4)
    backend = sweeper.env.backend
    # our savers: watch the calls their decision store gets
    counting = CountingSaver(approval_saver) if backend.decisions and backend.audit else None
    if counting is not None:
        store = part_of(approval_saver, "decisions")
        for name in ("record_decision", "record_decisions"):
            monkeypatch.setattr(store, name, getattr(counting, name))
    assert sweeper.run_once() == 6
    for i in range(6):
        values = graph.get_state(cfg(f"p{i}")).values
        assert values["done"] == ["act"], i
        if i == 2:
            assert (values["approved"], values["by"], values["timed_out"]) == (True, "alice", False)
            assert system_entries(audit_log(approval_saver, thread_id="p2")) == []
        else:
            assert (values["approved"], values["by"], values["timed_out"]) == (
                False,
                "system",
                True,
            )
            assert system_entries(audit_log(approval_saver, thread_id=f"p{i}")) == [
                ("reject", "recorded")
            ]
    if counting is not None:
        # pages of 4 and 2: one call each, nothing recorded one by one
        assert counting.calls == [("record_decisions", 4), ("record_decisions", 2)]
    assert sweeper.run_once() == 0


async def test_async_sweep_records_a_page_together(async_approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(async_approval_saver)
    for i in range(5):
        await graph.ainvoke({"amount": i}, cfg(f"a{i}", clock))
    clock.advance(timedelta(minutes=16))
    sweeper = ApprovalSweeper(graph, clock=clock, concurrency=3)
    assert await sweeper.arun_once() == 5
    for i in range(5):
        state = await graph.aget_state(cfg(f"a{i}"))
        assert (state.values["by"], state.values["done"]) == ("system", ["act"])
        entries = await aaudit_log(async_approval_saver, thread_id=f"a{i}")
        assert system_entries(entries) == [("reject", "recorded")]


@pytest.fixture(params=BACKENDS)
def native_saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        yield saver


def decision(decision_id: str, by: str) -> dict[str, Any]:
    return {
        "decision_id": decision_id,
        "at": "2026-11-29T09:00:00+00:00",
        "by": by,
        "approval_id": "x",
        "fingerprint": None,
    }


def entry(thread: str, actor: str) -> dict[str, Any]:
    return {
        "at": "2026-11-29T09:00:00+00:00",
        "thread_id": thread,
        "approval_id": "x",
        "actor": actor,
        "action": "reject",
        "outcome": "recorded",
    }


def test_record_decisions_is_a_compare_and_set_per_item(native_saver: Any) -> None:
    part_of(native_saver, "decisions").record_decision(
        thread_id="t2", key="x", decision=decision("h", "alice"), audit=entry("t2", "alice")
    )
    items = [
        {
            "thread_id": t,
            "key": "x",
            "decision": decision(f"s-{t}", "system"),
            "audit": entry(t, "system"),
        }
        for t in ("t3", "t2", "t1")
    ]
    stored = part_of(native_saver, "decisions").record_decisions(items=items)
    # in the order asked; t2 keeps the decision it had
    assert [d["decision_id"] for d in stored] == ["s-t3", "h", "s-t1"]
    for thread, actors in (("t1", ["system"]), ("t2", ["alice"]), ("t3", ["system"])):
        assert [
            e["actor"] for e in part_of(native_saver, "audit").read_audit(thread_id=thread)
        ] == actors
    # again: every item loses to what is stored, and no entry is added
    again = part_of(native_saver, "decisions").record_decisions(
        items=[{**item, "decision": decision("late", "system")} for item in items]
    )
    assert [d["decision_id"] for d in again] == ["s-t3", "h", "s-t1"]
    assert len(part_of(native_saver, "audit").read_audit(thread_id="t1")) == 1
    assert part_of(native_saver, "decisions").record_decisions(items=[]) == []


def test_concurrent_batches_over_the_same_rows_store_one_decision_each(
    native_saver: Any,
) -> None:
    # two sweepers' batches overlapping (claims taken over after a lease): per
    # row one winner, one audit entry, and no deadlock whatever the order given
    threads = [f"c{i}" for i in range(20)]

    def batch(name: str, order: list[str]) -> list[Any]:
        return part_of(native_saver, "decisions").record_decisions(
            items=[
                {
                    "thread_id": t,
                    "key": "x",
                    "decision": decision(f"{name}-{t}", name),
                    "audit": entry(t, name),
                }
                for t in order
            ]
        )

    async def both() -> tuple[list[Any], list[Any]]:
        return await asyncio.gather(
            asyncio.to_thread(batch, "one", threads), asyncio.to_thread(batch, "two", threads[::-1])
        )

    one, two = asyncio.run(both())
    for t, a, b in zip(threads, one, two[::-1], strict=True):
        assert a["decision_id"] == b["decision_id"], t
        actors = [e["actor"] for e in part_of(native_saver, "audit").read_audit(thread_id=t)]
        assert actors == [a["by"]], t


def test_resumes_with_exit_durability_write_the_run_once(approval_saver: Any) -> None:
    from tests._approval_graphs import two_level_escalation

    clock = FakeClock()
    plain = review_graph(approval_saver)
    chain = review_graph(approval_saver, on_timeout=two_level_escalation())
    plain.invoke({"amount": 1}, cfg("d1", clock))
    chain.invoke({"amount": 2}, cfg("d2", clock))
    before = {t: len(list(approval_saver.list(cfg(t)))) for t in ("d1", "d2")}
    clock.advance(timedelta(minutes=16))
    assert ApprovalSweeper(plain, clock=clock, durability="exit").run_once() == 2
    values = plain.get_state(cfg("d1")).values
    assert (values["by"], values["timed_out"], values["done"]) == ("system", True, ["act"])
    # the resumed run wrote one checkpoint (the default writes one per step: 2 here)
    assert len(list(approval_saver.list(cfg("d1")))) == before["d1"] + 1
    # an escalation re-asks: the new wait is indexed and swept like any other
    (item,) = pending_approvals(approval_saver)
    assert (item.thread_id, item.escalation_level) == ("d2", 1)
    assert system_entries(audit_log(approval_saver, thread_id="d2")) == [("escalate", "recorded")]
    clock.advance(timedelta(hours=3))
    sweeper = ApprovalSweeper(chain, clock=clock, durability="exit")
    assert sweeper.run_once() == 1  # level 2 (director) asked
    assert sweeper.run_once() == 0
    clock.advance(timedelta(hours=3))
    assert sweeper.run_once() == 1  # the last level's then="reject"
    values = chain.get_state(cfg("d2")).values
    assert (values["approved"], values["escalations"], values["done"]) == (False, 2, ["act"])
    assert pending_approvals(approval_saver) == []


def test_an_unknown_durability_is_refused(approval_saver: Any) -> None:
    graph = review_graph(approval_saver)
    with pytest.raises(ValueError, match=r"durability must be one of .*'never'"):
        ApprovalSweeper(graph, durability="never")
