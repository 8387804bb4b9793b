"""verify_audit finds every edit made to a trail past the library, and names where it is.

Each entry is chained to the one before it by a SHA-256 link computed where it
is appended; the thread's head holds the newest link. The edits below bypass
the library (on Postgres past the triggers, as only a superuser can; on Redis
with plain commands, as any client without an ACL can): each is found, and the
report names the first broken link by its ``seq`` and what is wrong.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from click.testing import CliRunner

from langgraph_durable.interrupts import (
    AuditNotVerifiable,
    NotAuthorized,
    approve,
    audit_log,
    averify_audit,
    verify_audit,
)
from tests._approval_graphs import review_graph
from tests._approval_savers import open_sync, saver_url
from tests._audit_tamper import PostgresTamper, RedisTamper
from tests._backends import BACKENDS


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture(params=BACKENDS)
def trail(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """A thread with three entries (request, refused attempt, approval) and a tamperer."""
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        graph = review_graph(saver, open_to_all=False, approvers=("ops",))
        graph.invoke({"amount": 5}, cfg("t"))
        with pytest.raises(NotAuthorized):
            approve(graph, cfg("t"), by="eve", roles=["sales"])
        approve(graph, cfg("t"), by="olga", roles=["ops"])
        graph.invoke({"amount": 7}, cfg("other"))
        if request.param == "postgres":
            tamper: Any = PostgresTamper(url, options["schema"])
            client = None
        else:
            client = redis.Redis.from_url(url)
            tamper = RedisTamper(client, saver)
        seqs = [e.seq for e in audit_log(saver, thread_id="t")]
        assert len(seqs) == 3
        try:
            yield {
                "backend": request.param,
                "url": url,
                "options": options,
                "saver": saver,
                "tamper": tamper,
                "seqs": seqs,
            }
        finally:
            if client is not None:
                client.close()


async def _verify_async(t: dict[str, Any], thread: str) -> Any:
    if t["backend"] == "postgres":
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(t["url"], **t["options"]) as s:
            return await averify_audit(s, thread)
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver

    async with AsyncRedisSaver.from_conn_string(t["url"], **t["options"]) as s:
        return await averify_audit(s, thread)


async def _both(t: dict[str, Any], thread: str = "t") -> Any:
    """The sync and the async report, which must agree."""
    sync = verify_audit(t["saver"], thread)
    assert await _verify_async(t, thread) == sync
    return sync


async def test_an_untouched_trail_is_intact(trail: dict[str, Any]) -> None:
    report = await _both(trail)
    assert report.intact and report.broken is None
    assert report.entries == 3 and report.head_position == 3
    assert len(report.head_link) == 64
    assert "intact: 3 entries" in report.summary()


async def test_an_altered_entry_is_named(trail: dict[str, Any]) -> None:
    refused = trail["seqs"][1]
    trail["tamper"].alter("t", refused)
    report = await _both(trail)
    assert not report.intact
    assert (report.broken.seq, report.broken.problem) == (refused, "altered")
    assert report.entries == 3
    assert (await _both(trail, "other")).intact  # another thread's chain is its own


async def test_an_approval_rewritten_in_place_is_named(trail: dict[str, Any]) -> None:
    approval = trail["seqs"][2]
    if trail["backend"] == "postgres":
        trail["tamper"].rewrite("t", approval)  # same seq, position and link
    else:
        trail["tamper"].alter("t", approval)  # the stream rebuilt with the same ids
    assert audit_log(trail["saver"], thread_id="t")[2].actor == "mallory"
    report = await _both(trail)
    assert (report.broken.seq, report.broken.problem) == (approval, "altered")


async def test_a_missing_entry_is_named_by_the_one_after_it(trail: dict[str, Any]) -> None:
    _, refused, approval = trail["seqs"]
    trail["tamper"].delete("t", refused)
    report = await _both(trail)
    assert (report.broken.seq, report.broken.problem) == (approval, "missing")
    assert report.broken.position == 2 and "position 2" in report.broken.detail


async def test_entries_missing_at_the_end_are_found_by_the_head(trail: dict[str, Any]) -> None:
    _, refused, approval = trail["seqs"]
    trail["tamper"].delete("t", approval)
    report = await _both(trail)
    assert (report.broken.seq, report.broken.problem) == (refused, "missing")
    assert "the head counts 3" in report.broken.detail


@pytest.mark.parametrize("linked", [False, True], ids=["without a link", "with a link"])
async def test_a_forged_append_is_named(trail: dict[str, Any], linked: bool) -> None:
    trail["tamper"].forge("t", linked=linked)
    entries = audit_log(trail["saver"], thread_id="t")
    assert [e.actor for e in entries][-1] == "mallory"
    report = await _both(trail)
    assert (report.broken.seq, report.broken.problem) == (entries[-1].seq, "forged")


def test_the_cli_verifies_in_one_line_and_exits_1_when_broken(trail: dict[str, Any]) -> None:
    from langgraph_durable.interrupts.cli import main

    key = "schema" if trail["backend"] == "postgres" else "prefix"
    url = f"{trail['url']}{'&' if '?' in trail['url'] else '?'}{key}={trail['options'][key]}"
    ok = CliRunner().invoke(main, ["audit", "t", "--url", url, "--verify"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip().splitlines() == [verify_audit(trail["saver"], "t").summary()]
    refused = trail["seqs"][1]
    trail["tamper"].alter("t", refused)
    bad = CliRunner().invoke(main, ["audit", "t", "--url", url, "--verify"])
    assert bad.exit_code == 1
    (line,) = bad.output.strip().splitlines()
    assert line.startswith("error: audit chain of thread 't' is broken at seq ")
    assert f"seq {refused}: altered" in line


def test_other_savers_say_they_cannot_verify() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(AuditNotVerifiable, match="cannot verify the audit trail of InMemorySaver"):
        verify_audit(InMemorySaver(), "t")


def test_the_redis_scripts_link_is_sha256(redis_prefix: tuple[str, str]) -> None:
    from langgraph_durable.checkpointers.redis._audit_lua import SHA256_LINK

    client = redis.Redis.from_url(redis_prefix[0])
    try:
        script = client.register_script(SHA256_LINK + "\nreturn link(ARGV[1], ARGV[2])")
        cases = [(bytes(32), bytes(32)), (b"\xff" * 32, b"\xff" * 32)]
        cases += [(os.urandom(32), os.urandom(32)) for _ in range(200)]
        for prev, digest in cases:
            got = script(args=[prev.hex(), digest]).decode()
            assert got == hashlib.sha256(prev + digest).hexdigest()
    finally:
        client.close()
