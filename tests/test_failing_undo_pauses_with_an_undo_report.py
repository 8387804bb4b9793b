"""An undo that keeps failing pauses the thread on a UndoReport a human answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_durable.checkpointers import WAIT_KEY, extract_wait
from langgraph_durable.interrupts import UndoReport, is_undo_report, resume_undo
from tests import _saga_graphs as g
from tests._saga_savers import saga_saver_fixture  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def ledger() -> g.ListLedger:
    g.LEDGER = g.ListLedger()
    g.FAILING_UNDOS.clear()
    return g.LEDGER


def _run_until_report(saver: Any, thread: str, sleeps: list[float]) -> tuple[Any, dict[str, Any]]:
    g.FAILING_UNDOS.add("refund")
    graph = g.build_order_graph(max_attempts=3, sleep=sleeps.append).compile(checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    graph.invoke({"order_id": thread, "amount": 7}, config)
    return graph, config


def test_after_three_attempts_a_report_then_skip_finishes(
    saga_saver: Any, ledger: g.ListLedger
) -> None:
    sleeps: list[float] = []
    graph, config = _run_until_report(saga_saver, "o-skip", sleeps)

    # three attempts with backoff between them, then a pause
    assert ledger.call_names().count("refund:failed") == 3
    assert sleeps == [0.5, 1.0]
    assert "release" not in ledger.call_names()
    snapshot = graph.get_state(config)
    assert len(snapshot.interrupts) == 1
    value = snapshot.interrupts[0].value
    assert is_undo_report(value)
    info = extract_wait(value)
    assert info is not None and info.kind == "undo"
    json.dumps(value)  # JSON-serializable as is

    report = UndoReport.from_interrupt(snapshot.interrupts[0])
    assert report.attempts == 3
    assert report.failed_step.node == "charge_card"
    assert report.undo_error.type == "ConnectionError"
    assert report.undo_error.message == "refund service unavailable"
    assert report.failure is not None and report.failure.node == "ship"
    assert report.reason == "RuntimeError: carrier API down"
    assert [s.node for s in report.committed] == ["reserve_inventory", "charge_card"]
    assert report.compensated == []
    assert [s.node for s in report.remaining] == ["charge_card", "reserve_inventory"]
    assert report.actions == ["retry", "skip", "abort"]
    assert "Traceback" not in report.model_dump_json()

    final = graph.invoke(resume_undo("skip", by="ops@example.com", note="refunded by hand"), config)

    assert ledger.call_names().count("refund:failed") == 3  # skip does not call again
    assert ledger.call_names()[-1] == "release"
    saga = final["saga"]
    assert saga["status"] == "compensated"
    assert [(s["node"], s["status"]) for s in saga["steps"]] == [
        ("reserve_inventory", "compensated"),
        ("charge_card", "skipped"),
    ]
    stored = UndoReport.model_validate(saga["reports"][0])
    assert stored.decision == "skip"
    assert stored.decided_by == "ops@example.com"
    assert stored.note == "refunded by hand"
    assert stored.decided_at is not None
    assert WAIT_KEY not in saga["reports"][0]
    assert graph.get_state(config).next == ()


def test_retry_runs_the_undo_again_with_the_same_key(saga_saver: Any, ledger: g.ListLedger) -> None:
    graph, config = _run_until_report(saga_saver, "o-retry", [])
    failed_keys = {k for w, k in ledger.calls if w == "refund:failed"}
    assert len(failed_keys) == 1

    g.FAILING_UNDOS.clear()  # the payment service is back
    final = graph.invoke(Command(resume="retry"), config)

    refund_keys = [k for w, k in ledger.calls if w == "refund"]
    assert refund_keys == list(failed_keys)
    assert ledger.call_names()[-2:] == ["refund", "release"]
    assert final["saga"]["status"] == "compensated"
    assert final["saga"]["reports"][0]["decision"] == "retry"
    assert final["saga"]["steps"][1]["attempts"] == 4


def test_abort_stops_and_lists_what_remains(saga_saver: Any, ledger: g.ListLedger) -> None:
    graph, config = _run_until_report(saga_saver, "o-abort", [])

    final = graph.invoke(resume_undo("abort"), config)

    assert "release" not in ledger.call_names()
    saga = final["saga"]
    assert saga["status"] == "aborted"
    assert [s["status"] for s in saga["steps"]] == ["committed", "failed"]
    assert saga["reports"][0]["decision"] == "abort"


def test_an_invalid_answer_asks_again(saga_saver: Any, ledger: g.ListLedger) -> None:
    graph, config = _run_until_report(saga_saver, "o-bad", [])

    graph.invoke(Command(resume="refund it please"), config)

    snapshot = graph.get_state(config)
    assert len(snapshot.interrupts) == 1
    assert "expected" in snapshot.interrupts[0].value["invalid_answer"] or (
        "one of" in snapshot.interrupts[0].value["invalid_answer"]
    )
    final = graph.invoke(resume_undo("skip"), config)
    assert final["saga"]["status"] == "compensated"


def test_resume_helper_refuses_unknown_actions() -> None:
    with pytest.raises(ValueError, match="unknown undo action"):
        resume_undo("ignore")  # type: ignore[arg-type]


async def test_async_undo_attempts_pause_with_asleep_then_report(ledger: g.ListLedger) -> None:
    g.FAILING_UNDOS.add("refund")
    pauses: list[float] = []

    async def asleep(seconds: float) -> None:
        pauses.append(seconds)

    builder = g.build_order_graph(max_attempts=3, asleep=asleep)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "o-async"}}
    await graph.ainvoke({"order_id": "o-async", "amount": 7}, config)

    assert ledger.call_names().count("refund:failed") == 3
    assert pauses == [0.5, 1.0]
    snapshot = await graph.aget_state(config)
    report = UndoReport.from_interrupt(snapshot.interrupts[0])
    assert report.attempts == 3 and report.undo_error.type == "ConnectionError"

    g.FAILING_UNDOS.clear()
    final = await graph.ainvoke(resume_undo("retry", by="ops@example.com"), config)
    assert ledger.call_names()[-2:] == ["refund", "release"]
    assert final["saga"]["status"] == "compensated"
