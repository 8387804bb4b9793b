"""The savers the approval tests run on: every backend, one fixture.

``InMemorySaver`` exercises the fallback path (scan + in-process compare-and-set);
the Postgres and Redis savers exercise the indexed fast paths in storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

BACKENDS = ["memory"]


@pytest.fixture(params=BACKENDS)
def approval_saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A set-up saver of each backend, isolated for this test."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    raise AssertionError(request.param)
