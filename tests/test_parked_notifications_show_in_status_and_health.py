"""Waiting and parked notifications are visible: `status`, `notifications`, `/api/health`.

A webhook that never answers 2xx leaves its event parked after its attempts;
the CLI and the service's health count it (nothing is dropped), and
``notifications --retry-parked`` gives it a fresh budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts import DeliveryRetry, NotificationDispatcher, WebhookTarget
from tests._backends import BACKENDS
from tests._cli_support import run_cli
from tests._parts import part_of
from tests._servers import url_with
from tests._service_support import ALICE, Served, served
from tests._webhook_receiver import Receiver


@pytest.fixture(params=BACKENDS)
def svc(request: pytest.FixtureRequest) -> Iterator[tuple[Served, TestClient, str]]:
    with served(request, request.param) as s, TestClient(s.app) as client:
        from tests._approval_savers import saver_url

        url, options = saver_url(request, request.param)
        key = "schema" if "schema" in options else "prefix"
        yield s, client, url_with(url, key, options[key])


def test_a_parked_notification_is_counted_everywhere_until_retried(
    svc: tuple[Served, TestClient, str], capsys: pytest.CaptureFixture[str]
) -> None:
    s, client, url = svc
    s.ask("t")
    health = client.get("/api/health", headers=ALICE).json()
    assert (health["notifications_pending"], health["notifications_parked"]) == (1, 0)
    receiver = Receiver(fail_first=10**6).start()
    try:
        retry = DeliveryRetry(
            max_attempts=1, base_delay=timedelta(milliseconds=5), max_delay=timedelta(seconds=1)
        )
        done = NotificationDispatcher(s.saver, [WebhookTarget(receiver.url)], retry=retry)
        assert done.run_once().parked == 1
    finally:
        receiver.stop()
    health = client.get("/api/health", headers=ALICE).json()
    assert (health["notifications_pending"], health["notifications_parked"]) == (0, 1)
    status = run_cli(capsys, "status", "--url", url)
    assert status.code == 0 and "notifications: 0 pending, 1 parked" in status.out
    retried = run_cli(capsys, "notifications", "--url", url, "--retry-parked")
    assert retried.code == 0, retried.err
    assert "retrying 1 parked notification" in retried.out and "pending=1 parked=0" in retried.out


def test_purging_deletes_delivered_notifications_only(
    svc: tuple[Served, TestClient, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from datetime import datetime, timezone

    s, _, url = svc
    for t in ("a", "b", "c"):
        s.ask(t)
    receiver = Receiver().start()
    try:
        d = NotificationDispatcher(s.saver, [WebhookTarget(receiver.url)], batch=2)
        assert d.run_once().delivered == 2  # the third stays pending
    finally:
        receiver.stop()
    assert (
        part_of(s.saver, "outbox").purge_notifications(
            delivered_before=datetime(2000, 1, 1, tzinfo=timezone.utc)
        )
        == 0
    )
    bad = run_cli(capsys, "notifications", "--url", url, "--purge-delivered", "soon")
    assert bad.code != 0 and "--purge-delivered 'soon'" in bad.err
    out = run_cli(capsys, "notifications", "--url", url, "--purge-delivered", "0s")
    assert out.code == 0, out.err
    assert "purged 2 delivered notifications" in out.out and "pending=1 parked=0" in out.out
    again = run_cli(capsys, "notifications", "--url", url, "--purge-delivered", "0s")
    assert "purged 0 delivered notifications" in again.out and "pending=1" in again.out
