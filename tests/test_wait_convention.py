"""The deadline convention: the one reserved key and its shape."""

from datetime import datetime, timedelta, timezone

import pytest
from langgraph.types import Interrupt

from langgraph_durable.checkpointers import WAIT_KEY, InvalidConfigError, extract_wait, wait_marker
from langgraph_durable.checkpointers._ids import check_id


def test_marker_round_trips_through_an_interrupt() -> None:
    deadline = datetime(2026, 11, 29, 9, 15, tzinfo=timezone.utc) + timedelta(hours=1)
    value = {WAIT_KEY: wait_marker("approval", deadline, ["ops"], 1), "request": {"a": 1}}
    info = extract_wait(Interrupt(value=value, id="i1"))
    assert info is not None
    assert info.kind == "approval"
    assert info.deadline == deadline
    assert info.approvers == ("ops",)
    assert info.escalation_level == 1


@pytest.mark.parametrize(
    "value",
    [
        None,
        3,
        "x",
        {"no": "key"},
        {WAIT_KEY: {"kind": "nope"}},
        {WAIT_KEY: {"kind": "approval", "deadline": "garbage"}},
    ],
)
def test_values_without_a_valid_marker_are_not_waits(value: object) -> None:
    assert extract_wait(value) is None


def test_naive_deadline_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        wait_marker("approval", datetime(2026, 1, 1))


@pytest.mark.parametrize("bad", ["a\x00b", "x" * 20_000, "\ud800", 1.5])
def test_unstorable_ids_name_the_field(bad: object) -> None:
    with pytest.raises(InvalidConfigError, match="thread_id"):
        check_id("thread_id", bad)


def test_ordinary_odd_ids_pass() -> None:
    for good in ["a'b", "%s", "{a}", "é漢字", "a*"]:
        assert check_id("checkpoint_ns", good) == good
