"""A webhook that answers with a redirect has not received the event: the dispatcher
follows no redirect (a POST followed is a GET without the body, to wherever the answer
points, inside the network included) and retries. Text people typed (a thread id, a
comment) reaches Slack as text, not as its markup (links, @channel). Real receivers on
127.0.0.1, real graphs on Postgres and Redis."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    DeliveryRetry,
    NotificationDispatcher,
    WebhookTarget,
    approve,
)
from tests._approval_graphs import review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._parts import part_of
from tests._webhook_receiver import Receiver

SLOW = DeliveryRetry(
    max_attempts=5, base_delay=timedelta(milliseconds=1), max_delay=timedelta(milliseconds=1)
)


@pytest.fixture(params=BACKENDS)
def saver(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as s:
        yield s


@pytest.fixture
def receivers() -> Any:
    hook, inside = Receiver().start(), Receiver().start()
    yield hook, inside
    hook.stop()
    inside.stop()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirecting_webhook_is_a_failed_delivery_and_its_target_gets_nothing(
    saver: Any, receivers: tuple[Receiver, Receiver], status: int
) -> None:
    hook, inside = receivers
    hook.redirect = (status, f"{inside.url}/metadata")
    review_graph(saver).invoke({"amount": 5}, {"configurable": {"thread_id": "t-redirect"}})
    d = NotificationDispatcher(saver, [WebhookTarget(hook.url)], retry=SLOW)
    done = d.run_once()
    assert (done.delivered, done.retried) == (0, 1)
    assert len(hook.requests) == 1
    assert inside.requests == [] and inside.gets == []
    assert part_of(saver, "outbox").notification_counts().pending == 1
    # the receiver fixed: the same event arrives, once
    hook.redirect = None
    for _ in range(50):
        if d.run_once().delivered:
            break
    assert [r.event["kind"] for r in hook.requests] == ["requested", "requested"]
    assert part_of(saver, "outbox").notification_counts().pending == 0


def test_typed_text_reaches_slack_as_text(saver: Any, receivers: tuple[Receiver, Receiver]) -> None:
    hook, _ = receivers
    thread = "t-<https://evil.example/x|Open the approval>"
    comment = "<!channel> fine & <https://evil.example/phish|approve the next one here>"
    graph = review_graph(saver)
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({"amount": 5}, config)
    approve(graph, config, by="alice", comment=comment)
    NotificationDispatcher(saver, [WebhookTarget(hook.url)], retry=SLOW).run_once()
    bodies = [json.loads(r.body) for r in hook.requests]
    assert {b["event"]["kind"] for b in bodies} == {"requested", "decided"}
    for body in bodies:
        shown = [body["text"]] + [
            b["text"]["text"] for b in body["blocks"] if b["type"] == "section"
        ]
        for text in shown:
            assert "<" not in text and ">" not in text, text
            assert "t-&lt;https://evil.example/x|Open the approval&gt;" in text
        # programs read the event itself, exactly as recorded
        assert body["event"]["thread_id"] == thread
    decided = next(b for b in bodies if b["event"]["kind"] == "decided")
    assert "&lt;!channel&gt; fine &amp; &lt;https://evil.example/phish" in decided["text"]
    assert decided["event"]["decision"]["comment"] == comment
