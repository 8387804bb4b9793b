"""The command line decides under the graph's own authorization policy.

A policy set with ``set_authorization`` on the compiled graph that ``--graph``
names applies to ``approve``/``reject``, with or without ``--no-resume``: the
command binds the graph to its saver (a copy of the graph) and must not fall
back to the default policy (which would let anyone listed in ``approvers`` decide).
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_durable.interrupts import set_authorization
from langgraph_durable.interrupts.cli import main
from tests._approval_graphs import review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS


def only_root(decider: Any, request: Any) -> bool:
    """A stricter policy than the default: only ``root`` decides."""
    return bool(decider.id == "root")


graph = set_authorization(review_graph(InMemorySaver(), open_to_all=False), only_root)
"""What ``--graph tests.test_cli_keeps_the_graphs_authorization:graph`` names."""

SPEC = f"{__name__}:graph"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_cli_applies_the_graphs_policy(request: pytest.FixtureRequest, backend: str) -> None:
    url, options = saver_url(request, backend)
    param = "schema" if backend == "postgres" else "prefix"
    cli_url = f"{url}{'&' if '?' in url else '?'}{param}={options[param]}"
    with open_sync(backend, url, options) as saver:
        run = review_graph(saver, open_to_all=False)
        config = {"configurable": {"thread_id": "t-cli"}}
        run.invoke({"amount": 50}, config)
    runner = CliRunner()
    for extra in ([], ["--no-resume"]):
        # alice holds the role the request lists: the default policy would let her
        out = runner.invoke(
            main,
            [
                "approve",
                "t-cli",
                "--url",
                cli_url,
                "--graph",
                SPEC,
                "--by",
                "alice",
                "--roles",
                "ops",
                *extra,
            ],
        )
        assert out.exit_code == 1, out.output
        assert "may not decide" in out.output
    out = runner.invoke(
        main, ["approve", "t-cli", "--url", cli_url, "--graph", SPEC, "--by", "root"]
    )
    assert out.exit_code == 0, out.output
    assert "the run completed" in out.output
