"""The CLI lists what waits (inbox), shows what was asked and decided (inspect), and acts on a
waiting approval: approve --edit, respond, extend, reassign, remind, cancel; on both backends."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from langgraph_durable.interrupts._cli_common import open_saver
from tests._backends import BACKENDS
from tests._cli_graphs import build
from tests._cli_support import run_cli_here
from tests._servers import url_with

GRAPH = ("--graph", "tests._cli_graphs:build")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli_here(*args)


def _ok(*args: str) -> str:
    out = _cli(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _inbox(url: str, *args: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _ok("inbox", "--url", url, "--json", *args).splitlines()]


@pytest.fixture(params=BACKENDS)
def storage_url(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_database"))
    url, prefix = request.getfixturevalue("redis_prefix")
    return url_with(url, "prefix", prefix)


def _start(url: str, **threads: int) -> None:
    with open_saver(url, check_setup=False) as saver:
        saver.setup()
        graph = build(saver)
        for thread, amount in threads.items():
            graph.invoke({"amount": amount}, {"configurable": {"thread_id": thread}})


def test_inbox_lists_what_waits(storage_url: str) -> None:
    _start(storage_url, t1=30, t2=50)
    rows = _inbox(storage_url)
    assert [r["thread_id"] for r in rows] == ["t1", "t2"]
    first = rows[0]
    assert first["summary"] == 'refund {"amount": 30}'
    assert first["approvers"] == ["ops"] and first["escalation_level"] == 0
    assert 800 < first["time_left_s"] <= 900 and not first["overdue"]
    assert 0 <= first["age_s"] < 120
    assert _inbox(storage_url, "--approver", "finance") == []
    assert _inbox(storage_url, "--overdue") == []
    table = _ok("inbox", "--url", storage_url)
    assert "refund" in table and "t2" in table and "2 waiting" in table


def test_operator_commands_act_once_and_inspect_shows_them(storage_url: str) -> None:
    _start(storage_url, t1=30, t2=50, t3=70, t4=90)
    url = ("--url", storage_url)
    _ok("extend", "t1", *url, "--by", "2h", "--as", "ops", *GRAPH)
    [t1] = [r for r in _inbox(storage_url) if r["thread_id"] == "t1"]
    assert 2 * 3600 + 800 < t1["time_left_s"] <= 2 * 3600 + 900
    _ok("reassign", "t2", *url, "--to", "finance", "--as", "ops", *GRAPH)
    assert [r["thread_id"] for r in _inbox(storage_url, "--approver", "finance")] == ["t2"]

    edited = _ok(
        "approve", "t1", *url, "--by", "ops", "--edit", '{"action": "refund", "amount": 7}', *GRAPH
    )
    assert "approved with edited arguments" in edited and "the run completed" in edited
    shown = _ok("inspect", "t1", *url)
    assert '"amount": 30' in shown  # the request as asked
    assert 'edited arguments: {"action": "refund", "amount": 7}' in shown
    assert "ops extend: recorded" in shown

    _ok("respond", "t2", *url, "--text", "ask the customer", "--as", "finance", *GRAPH)
    assert "response: 'ask the customer'" in _ok("inspect", "t2", *url)

    reminded = _ok("remind", "t3", *url, "--as", "ops", "--comment", "today please")
    assert "reminded ops of thread t3" in reminded
    trail = _ok("audit", "t3", *url, "--json").splitlines()
    assert any(json.loads(e)["action"] == "remind" for e in trail)

    _ok("cancel", "t4", *url, "--as", "ops", "--comment", "withdrawn")  # recorded, sweep resumes
    again = _cli("cancel", "t4", *url, "--as", "ops")
    assert again.returncode == 1 and len(again.stderr.strip().splitlines()) == 1
    assert "already decided by 'ops'" in again.stderr
    assert [r["thread_id"] for r in _inbox(storage_url)] == ["t3", "t4"]


def test_bad_operator_input_is_one_line(storage_url: str) -> None:
    _start(storage_url, t1=30)
    url = ("--url", storage_url)
    for args, message in [
        (("extend", "t1", *url, "--by", "2x", "--as", "ops"), "not a duration"),
        (("extend", "t1", *url, "--as", "ops"), "exactly one of --by"),
        (("extend", "t1", *url, "--until", "soon", "--as", "ops"), "not an ISO 8601 time"),
        (("approve", "t1", *url, "--by", "ops", "--edit", "{nope"), "--edit is not JSON"),
        (("respond", "t1", *url, "--text", "x", "--as", "eve"), "may not decide"),
        (("remind", "nope", *url, "--as", "ops"), "unknown thread"),
    ]:
        out = _cli(*args)
        assert out.returncode == 1, (args, out.stdout)
        assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr, out.stderr
    assert len(_inbox(storage_url)) == 1
