"""The graph ``langgraph-durable serve`` and ``worker --serve`` load in the service's tests."""

from __future__ import annotations

from typing import Any

from tests._approval_graphs import review_graph


def graph(saver: Any) -> Any:
    """The review graph on ``saver``: ops approve refunds (the default policy decides)."""
    return review_graph(saver, approvers=("ops",), open_to_all=False)


def graph_without_deadline(saver: Any) -> Any:
    """The review graph with no timeout: its decision links live for their ``ttl``."""
    return review_graph(saver, timeout=None, approvers=("ops",), open_to_all=False)
