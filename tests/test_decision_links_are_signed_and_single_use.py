"""Signed decision links: bound to one approval, one decider and the deadline; used once.

The link is verified as the approval service verifies it (``check_link_flow``), on
real Postgres and Redis savers with a real graph waiting for approval.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from langgraph_durable import LinkRefused, decision_link
from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts import (
    Decider,
    InvalidInput,
    NoPendingApproval,
    adecision_link,
    approve,
    audit_log,
)
from langgraph_durable.interrupts._driver import Env
from langgraph_durable.interrupts._links import check_link_flow, link_secret
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._store import Backend
from tests._approval_graphs import FakeClock, review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS

SECRET = "s3cret-for-links-0123456789"
BASE = "https://ops.example.com/approvals"


@pytest.fixture(params=BACKENDS)
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as s:
        yield s


def _waiting(saver: Any, thread_id: str) -> Any:
    graph = review_graph(saver, approvers=("ops",), open_to_all=False)
    graph.invoke({"amount": 40}, {"configurable": {"thread_id": thread_id}})
    return graph


def _token(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


def _check(saver: Any, token: str, thread_id: str, clock: Any = None) -> Any:
    flow = check_link_flow(
        token, link_secret(SECRET), thread_id=thread_id, action="approve", clock=clock
    )
    return drive(flow, Env(Backend(saver)))


def _link_refusals(saver: Any, thread_id: str) -> list[Any]:
    return [e for e in audit_log(saver, thread_id=thread_id) if e.outcome == "link_refused"]


def test_a_link_names_the_approval_and_the_decider(saver: Any) -> None:
    _waiting(saver, "t-link")
    url = decision_link(
        saver, "t-link", decider=Decider("alice", ("ops",)), base_url=BASE + "/", secret=SECRET
    )
    assert url.startswith(f"{BASE}/link/t-link?token=")
    claim = _check(saver, _token(url), "t-link")
    assert claim.decider == Decider("alice", ("ops",))
    assert claim.thread_id == "t-link"
    state = review_graph(saver).get_state({"configurable": {"thread_id": "t-link"}})
    assert claim.approval_id == state.interrupts[0].id
    # the link ends with the approval's deadline (15 minutes after the ask)
    deadline = extract_wait(state.interrupts[0]).deadline  # type: ignore[union-attr]
    assert deadline is not None
    assert claim.expires == deadline.replace(microsecond=0)


def test_an_altered_token_is_refused_and_audited(saver: Any) -> None:
    _waiting(saver, "t-alt")
    token = _token(decision_link(saver, "t-alt", decider="alice", base_url=BASE, secret=SECRET))
    body, mac = token.split(".")
    forged = body + "." + ("A" if mac[0] != "A" else "B") + mac[1:]
    with pytest.raises(LinkRefused, match="signature"):
        _check(saver, forged, "t-alt")
    other_key = decision_link(
        saver, "t-alt", decider="alice", base_url=BASE, secret="another-secret-0123456789"
    )
    with pytest.raises(LinkRefused, match="signature"):
        _check(saver, _token(other_key), "t-alt")
    with pytest.raises(LinkRefused, match="malformed"):
        _check(saver, "not-a-token", "t-alt")
    refusals = _link_refusals(saver, "t-alt")
    assert len(refusals) == 2
    assert all("signature" in (e.reason or "") for e in refusals)


def test_a_link_for_another_thread_is_refused(saver: Any) -> None:
    _waiting(saver, "t-a")
    _waiting(saver, "t-b")
    token = _token(decision_link(saver, "t-a", decider="alice", base_url=BASE, secret=SECRET))
    with pytest.raises(LinkRefused, match="another thread"):
        _check(saver, token, "t-b")
    (entry,) = _link_refusals(saver, "t-b")
    assert entry.actor == "alice"


def test_an_expired_link_is_refused(saver: Any) -> None:
    _waiting(saver, "t-exp")
    token = _token(decision_link(saver, "t-exp", decider="alice", base_url=BASE, secret=SECRET))
    state = review_graph(saver).get_state({"configurable": {"thread_id": "t-exp"}})
    assert state.interrupts
    # the approval waits 15 minutes: an hour later its link has expired
    late = FakeClock(datetime.now(timezone.utc) + timedelta(hours=1))
    with pytest.raises(LinkRefused, match="expired"):
        _check(saver, token, "t-exp", clock=late)
    assert len(_link_refusals(saver, "t-exp")) == 1


def test_a_used_link_is_refused_with_who_decided(saver: Any) -> None:
    graph = _waiting(saver, "t-used")
    url = decision_link(
        saver, "t-used", decider=Decider("alice", ("ops",)), base_url=BASE, secret=SECRET
    )
    claim = _check(saver, _token(url), "t-used")
    approve(
        graph,
        {"configurable": {"thread_id": "t-used"}},
        by=claim.decider.id,
        roles=claim.decider.roles,
        approval_id=claim.approval_id,
    )
    with pytest.raises(LinkRefused, match="already decided by alice"):
        _check(saver, _token(url), "t-used")
    assert len(_link_refusals(saver, "t-used")) == 1


def test_bad_arguments_are_named(saver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _waiting(saver, "t-args")
    monkeypatch.delenv("LANGGRAPH_DURABLE_LINK_SECRET", raising=False)
    with pytest.raises(InvalidInput, match="secret"):
        decision_link(saver, "t-args", decider="alice", base_url=BASE)
    with pytest.raises(InvalidInput, match="secret"):
        decision_link(saver, "t-args", decider="alice", base_url=BASE, secret="short")
    with pytest.raises(InvalidInput, match="base_url"):
        decision_link(saver, "t-args", decider="alice", base_url="ops.example.com", secret=SECRET)
    with pytest.raises(InvalidInput, match="decider"):
        decision_link(saver, "t-args", decider=3, base_url=BASE, secret=SECRET)  # type: ignore[arg-type]
    with pytest.raises(NoPendingApproval, match="nobody-waits"):
        decision_link(saver, "nobody-waits", decider="alice", base_url=BASE, secret=SECRET)
    monkeypatch.setenv("LANGGRAPH_DURABLE_LINK_SECRET", SECRET)
    url = decision_link(saver, "t-args", decider="alice", base_url=BASE)
    assert _check(saver, _token(url), "t-args").decider.id == "alice"
    assert [e.outcome for e in audit_log(saver, thread_id="t-args")] == ["waiting"]


async def test_the_async_twin_builds_the_same_link() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    graph = review_graph(saver)
    await graph.ainvoke({"amount": 5}, {"configurable": {"thread_id": "t-async"}})
    url = await adecision_link(saver, "t-async", decider="bob", base_url=BASE, secret=SECRET)
    assert _check(saver, _token(url), "t-async").decider.id == "bob"
