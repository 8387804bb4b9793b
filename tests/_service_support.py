"""The approval service on a real saver and graph, for the service's tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from langgraph_durable.interrupts.service import BearerTokens, create_app, hash_token
from tests._approval_graphs import review_graph
from tests._approval_savers import open_sync, saver_url

SECRET = "service-link-secret-0123456789"
TOKENS = {
    "alice-token-0001": {"id": "alice", "roles": ["ops"]},
    # stored hashed: the file need not hold the token itself
    hash_token("bob-token-0002"): {"id": "bob", "roles": ["ops"]},
    "mallory-token-03": {"id": "mallory", "roles": []},
    "admin-token-0004": {"id": "root", "roles": ["admin"]},
}
ALICE = {"Authorization": "Bearer alice-token-0001"}
BOB = {"Authorization": "Bearer bob-token-0002"}
MALLORY = {"Authorization": "Bearer mallory-token-03"}
ADMIN = {"Authorization": "Bearer admin-token-0004"}


@dataclass
class Served:
    """A saver, a graph waiting on it, and the service's app over both."""

    saver: Any
    graph: Any
    app: Any
    acted: list[str] = field(default_factory=list)

    def ask(self, thread_id: str, amount: int = 40) -> None:
        """Start a run that waits for approval."""
        self.graph.invoke({"amount": amount}, {"configurable": {"thread_id": thread_id}})


@contextmanager
def served(request: pytest.FixtureRequest, backend: str, **app_options: Any) -> Iterator[Served]:
    """The service on an isolated area of ``backend``; ``acted`` counts resumed runs."""
    url, options = saver_url(request, backend)
    with open_sync(backend, url, options) as saver:
        acted: list[str] = []

        def after(state: Any) -> None:
            acted.append(state.get("by", ""))

        graph = review_graph(saver, approvers=("ops",), after=after, open_to_all=False)
        app = create_app(
            saver,
            graph,
            authenticate=BearerTokens(TOKENS),
            link_secret=SECRET,
            **app_options,
        )
        yield Served(saver, graph, app, acted)


def page_csrf(html: str) -> str:
    """The anti-forgery value a console page's forms carry (what a browser posts back)."""
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "the page has no form"
    return found.group(1)
