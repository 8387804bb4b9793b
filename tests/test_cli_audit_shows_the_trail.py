"""``langgraph-durable audit THREAD`` prints the trail; ``inspect`` shows it in the timeline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from langgraph_durable.interrupts import NotAuthorized, approve
from langgraph_durable.interrupts._cli_common import open_saver
from langgraph_durable.interrupts._demo import build_graph
from tests._backends import BACKENDS


def _cli(*args: str) -> Any:
    from langgraph_durable.interrupts.cli import main

    return CliRunner().invoke(main, list(args))


@pytest.fixture(params=BACKENDS)
def storage_url(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        url, schema = request.getfixturevalue("pg_schema")
        return f"{url}{'&' if '?' in url else '?'}schema={schema}"
    url, prefix = request.getfixturevalue("redis_prefix")
    return f"{url}{'&' if '?' in url else '?'}prefix={prefix}"


def test_audit_lists_refusals_and_decisions_and_inspect_shows_them(storage_url: str) -> None:
    config = {"configurable": {"thread_id": "cli-a", "requested_by": "rita"}}
    with open_saver(storage_url, check_setup=False) as saver:
        saver.setup()
        graph = build_graph(saver)
        graph.invoke({"order_id": "A-1", "facts": []}, config)
        with pytest.raises(NotAuthorized):
            approve(graph, config, by="eve")
    # an approval through the command line is audited too
    done = _cli("approve", "cli-a", "--url", storage_url, "--by", "olga", "--roles", "ops")
    assert done.exit_code == 0, done.output

    out = _cli("audit", "cli-a", "--url", storage_url)
    assert out.exit_code == 0, out.output
    lines = out.output
    assert "rita" in lines and "request" in lines and "waiting" in lines
    assert "eve" in lines and "not_authorized" in lines and "not among the approvers" in lines
    assert "olga" in lines and "recorded" in lines and "3 entries" in lines
    # the payload (order A-1, amount 120.0, "refund") is never in the trail; "120" alone
    # can be part of a timestamp's microseconds, "120.0" cannot
    assert "A-1" not in lines and "120.0" not in lines and "refund" not in lines

    js = _cli("audit", "cli-a", "--url", storage_url, "--json")
    assert js.exit_code == 0, js.output
    rows = [json.loads(line) for line in js.output.splitlines()]
    assert [(r["actor"], r["action"], r["outcome"]) for r in rows] == [
        ("rita", "request", "waiting"),
        ("eve", "approve", "not_authorized"),
        ("olga", "approve", "recorded"),
    ]
    assert all(r["fingerprint"].startswith("sha256:") for r in rows)

    shown = _cli("inspect", "cli-a", "--url", storage_url)
    assert shown.exit_code == 0, shown.output
    assert "audit:" in shown.output and "eve approve: not_authorized" in shown.output
    assert "olga approve: recorded" in shown.output


def test_audit_of_an_unknown_thread_is_one_line(storage_url: str) -> None:
    with open_saver(storage_url, check_setup=False) as saver:
        saver.setup()
    out = _cli("audit", "nobody", "--url", storage_url)
    assert out.exit_code == 1
    assert out.output.strip().splitlines() == [
        "error: unknown thread 'nobody': no checkpoints and no audit entries stored"
    ]


def test_audit_never_prints_a_password() -> None:
    out = _cli("audit", "t", "--url", "postgresql://u:s3cret@127.0.0.1:1/db")
    assert out.exit_code == 1
    assert "s3cret" not in out.output and "***" in out.output
