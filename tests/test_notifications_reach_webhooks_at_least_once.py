"""Approval notifications reach real webhooks at least once, signed, with stable ids.

Each test starts its own HTTP receiver (stdlib ``http.server`` on 127.0.0.1),
runs real graphs on a real saver and delivers with the real dispatcher: a
receiver that fails the first attempts gets every event; one past the retry
budget leaves it parked (counted, not dropped) until it is retried; a deadline
that is near is announced once however many dispatchers look.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    ApprovalSweeper,
    AsyncNotificationDispatcher,
    DecisionLinks,
    DeliveryRetry,
    NotificationDispatcher,
    WebhookTarget,
    aapprove,
    approve,
    remind,
    verify_signature,
)
from tests._approval_graphs import FakeClock, cfg, review_graph, two_level_escalation
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._parts import part_of
from tests._webhook_receiver import Receiver

SECRET = "s3cret-for-tests"
FAST = DeliveryRetry(
    max_attempts=6, base_delay=timedelta(milliseconds=5), max_delay=timedelta(milliseconds=20)
)


@pytest.fixture(params=BACKENDS)
def saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as s:
        yield s


@pytest.fixture
def receiver() -> Any:
    r = Receiver().start()
    yield r
    r.stop()


def dispatcher(saver: Any, receiver: Receiver, **kwargs: Any) -> NotificationDispatcher:
    kwargs.setdefault("retry", FAST)
    return NotificationDispatcher(saver, [WebhookTarget(receiver.url, secret=SECRET)], **kwargs)


def drain(d: NotificationDispatcher, passes: int = 200) -> None:
    """Run passes until one finds nothing due twice in a row (retries sleep a few ms)."""
    import time

    idle = 0
    for _ in range(passes):
        done = d.run_once()
        idle = idle + 1 if not (done.delivered or done.retried or done.parked) else 0
        if idle >= 3:
            return
        time.sleep(0.01)


def test_each_fact_is_announced_once_signed_and_slack_shaped(saver: Any, receiver: Any) -> None:
    clock = FakeClock()
    escalating = review_graph(saver, on_timeout=two_level_escalation())
    escalating.invoke({"amount": 1}, cfg("esc", clock))
    plain = review_graph(saver)
    plain.invoke({"amount": 2}, cfg("dec", clock))
    plain.invoke({"amount": 3}, cfg("late", clock))
    approve(plain, cfg("dec", clock), by="alice", comment="fine")
    remind(plain, cfg("esc", clock), by="olga", comment="please look")
    clock.advance(timedelta(minutes=61))  # esc escalates to the director; late times out
    assert ApprovalSweeper(escalating, clock=clock).run_once() == 2

    d = dispatcher(saver, receiver)
    drain(d)
    got = receiver.unique()
    kinds = Counter((r.event["thread_id"], r.event["kind"]) for r in got.values())
    assert kinds == Counter(
        {
            ("esc", "requested"): 1,
            ("esc", "reminded"): 1,
            ("esc", "escalated"): 1,
            ("dec", "requested"): 1,
            ("dec", "decided"): 1,
            ("late", "requested"): 1,
            ("late", "timed_out"): 1,
        }
    )
    assert len(receiver.requests) == len(got)  # nothing failed, nothing was sent twice
    assert receiver.all_signed(SECRET)
    for r in receiver.requests:
        body = json.loads(r.body)
        assert isinstance(body["text"], str) and r.event["thread_id"] in body["text"]
        assert body["blocks"][0]["type"] == "section"
        assert r.headers["X-Durable-Event-Id"] == r.event["id"]
    decided = next(r.event for r in got.values() if r.event["kind"] == "decided")
    assert decided["decision"]["by"] == "alice" and decided["decision"]["comment"] == "fine"
    escalated = next(r.event for r in got.values() if r.event["kind"] == "escalated")
    assert escalated["escalation_level"] == 1 and escalated["approvers"] == ["manager"]
    assert not verify_signature(
        "another secret",
        body=receiver.requests[0].body,
        timestamp=receiver.requests[0].headers["X-Durable-Timestamp"],
        signature_header=receiver.requests[0].headers["X-Durable-Signature"],
    )
    assert d.run_once().delivered == 0
    assert part_of(saver, "outbox").notification_counts().pending == 0


def test_a_receiver_failing_the_first_attempts_gets_every_event(saver: Any, receiver: Any) -> None:
    receiver.fail_first = 4
    graph = review_graph(saver)
    for t in ("a", "b"):
        graph.invoke({"amount": 1}, cfg(t))
    approve(graph, cfg("a"), by="alice")
    drain(dispatcher(saver, receiver))
    got = receiver.unique()
    assert sorted((r.event["thread_id"], r.event["kind"]) for r in got.values()) == [
        ("a", "decided"),
        ("a", "requested"),
        ("b", "requested"),
    ]
    assert len(receiver.requests) == 3 + 4  # each failed attempt was sent again, same id
    assert receiver.all_signed(SECRET)
    assert part_of(saver, "outbox").notification_counts().pending == 0


def test_an_event_past_its_retry_budget_is_parked_not_dropped(saver: Any, receiver: Any) -> None:
    receiver.fail_first = 10**6
    review_graph(saver).invoke({"amount": 1}, cfg("t"))
    retry = DeliveryRetry(
        max_attempts=2, base_delay=timedelta(milliseconds=5), max_delay=timedelta(milliseconds=5)
    )
    d = dispatcher(saver, receiver, retry=retry)
    drain(d)
    assert len(receiver.requests) == 2
    assert (
        part_of(saver, "outbox").notification_counts().pending,
        part_of(saver, "outbox").notification_counts().parked,
    ) == (0, 1)
    receiver.fail_first = 0
    assert d.run_once().delivered == 0  # parked stays parked
    from datetime import datetime, timezone

    assert part_of(saver, "outbox").retry_parked_notifications(now=datetime.now(timezone.utc)) == 1
    drain(d)
    assert len(receiver.unique()) == 1 and len(receiver.requests) == 3
    assert (
        part_of(saver, "outbox").notification_counts().pending,
        part_of(saver, "outbox").notification_counts().parked,
    ) == (0, 0)


def test_a_near_deadline_is_announced_once_across_dispatchers(saver: Any, receiver: Any) -> None:
    graph = review_graph(saver, timeout=timedelta(minutes=15))
    graph.invoke({"amount": 1}, cfg("soon"))
    review_graph(saver, timeout=timedelta(days=2)).invoke({"amount": 1}, cfg("later"))
    for _ in range(3):  # a restarted worker is a new dispatcher
        drain(dispatcher(saver, receiver, expiring_within=timedelta(hours=1)))
    kinds = sorted((r.event["thread_id"], r.event["kind"]) for r in receiver.requests)
    assert kinds == [("later", "requested"), ("soon", "expiring"), ("soon", "requested")]


def test_messages_of_waiting_approvals_carry_a_decision_link(saver: Any, receiver: Any) -> None:
    graph = review_graph(saver)
    graph.invoke({"amount": 1}, cfg("open"))
    graph.invoke({"amount": 2}, cfg("done"))
    approve(graph, cfg("done"), by="alice")
    links = DecisionLinks(
        base_url="https://ops.example.com", decider="olga", roles=("ops",), secret="k" * 32
    )
    drain(dispatcher(saver, receiver, links=links))
    by_kind = {(r.event["thread_id"], r.event["kind"]): r for r in receiver.requests}
    opened = json.loads(by_kind[("open", "requested")].body)
    link = opened["event"]["link"]
    assert link.startswith("https://ops.example.com/link/open?token=")
    assert link in opened["text"] and opened["blocks"][-1]["elements"][0]["url"] == link
    # the approval of "done" was decided before its request was sent: no link to it
    for kind in ("requested", "decided"):
        assert json.loads(by_kind[("done", kind)].body)["event"]["link"] is None


@pytest.fixture(params=BACKENDS)
async def async_saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    if request.param == "postgres":
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url, **options) as s:
            await s.setup()
            yield s
    else:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(url, **options) as s:
            await s.setup()
            yield s


async def test_the_async_dispatcher_delivers_from_async_savers(
    async_saver: Any, receiver: Any
) -> None:
    receiver.fail_first = 1
    graph = review_graph(async_saver)
    await graph.ainvoke({"amount": 1}, cfg("t"))
    await aapprove(graph, cfg("t"), by="alice")
    d = AsyncNotificationDispatcher(
        async_saver, [WebhookTarget(receiver.url, secret=SECRET)], retry=FAST
    )
    for _ in range(100):
        await d.arun_once()
        if (
            len(receiver.unique()) == 2
            and (await part_of(async_saver, "outbox").anotification_counts()).pending == 0
        ):
            break
        await asyncio.sleep(0.01)
    assert sorted(r.event["kind"] for r in receiver.unique().values()) == ["decided", "requested"]
    assert len(receiver.requests) == 3 and receiver.all_signed(SECRET)


def test_a_failing_webhook_holds_a_pass_up_by_one_attempt_not_one_per_event(
    saver: Any, receiver: Any
) -> None:
    receiver.fail_first = 10**6
    graph = review_graph(saver)
    for t in ("a", "b", "c"):
        graph.invoke({"amount": 1}, cfg(t))
    d = dispatcher(saver, receiver)
    done = d.run_once()
    assert (done.delivered, done.retried, done.held) == (0, 1, 2)
    assert len(receiver.requests) == 1  # the others were not sent, nor counted as attempts
    receiver.fail_first = 0
    drain(d)
    assert len(receiver.unique()) == 3 and len(receiver.requests) == 4
    assert part_of(saver, "outbox").notification_counts().pending == 0


def test_a_slack_only_webhook_gets_text_and_blocks_only(saver: Any, receiver: Any) -> None:
    other = Receiver().start()
    try:
        review_graph(saver).invoke({"amount": 1}, cfg("t"))
        targets = [
            WebhookTarget(receiver.url, secret=SECRET),
            WebhookTarget(other.url, secret=SECRET, include_event=False),
        ]
        assert NotificationDispatcher(saver, targets).run_once().delivered == 1
    finally:
        other.stop()
    (full,), (slack,) = receiver.requests, other.requests
    assert set(json.loads(full.body)) == {"text", "blocks", "event"}
    assert set(json.loads(slack.body)) == {"text", "blocks"}
    assert slack.headers["X-Durable-Event-Id"] == full.headers["X-Durable-Event-Id"]
    assert other.all_signed(SECRET)


def test_a_slow_webhook_never_outlasts_the_claim(saver: Any, receiver: Any) -> None:
    receiver.delay = 0.6
    graph = review_graph(saver)
    for t in ("a", "b", "c"):
        graph.invoke({"amount": 1}, cfg(t))
    d = dispatcher(saver, receiver, lease=timedelta(seconds=1))
    done = d.run_once()
    # half the lease went on the first POST: the others wait for the next pass
    assert (done.delivered, done.held) == (1, 2)
    drain(d)
    assert len(receiver.unique()) == 3 and len(receiver.requests) == 3
