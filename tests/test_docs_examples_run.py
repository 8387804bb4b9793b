"""The documentation's Python blocks are valid Python, and those marked to run do run."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
RUNS = "<!-- example: runs -->\n"
BLOCK = re.compile(r"^(<!-- example: runs -->\n)?```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, bool, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for n, match in enumerate(BLOCK.finditer(text)):
            found.append((f"{page.relative_to(DOCS)}#{n + 1}", bool(match[1]), match[2]))
    return found


EXAMPLES = [(name, code) for name, runs, code in _blocks() if runs]


@pytest.mark.parametrize(("name", "code"), [(n, c) for n, _, c in _blocks()])
def test_python_blocks_parse(name: str, code: str) -> None:
    # fragments may await at top level, as in a notebook
    compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def test_the_guides_have_runnable_examples() -> None:
    assert {name.split("#")[0] for name, _ in EXAMPLES} >= {
        "getting-started.md",
        "guides/approvals.md",
    }


@pytest.mark.parametrize(("name", "code"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_marked_examples_run(
    name: str, code: str, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGGRAPH_DURABLE_URL", pg_database)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, name, "exec"), namespace)
    if name.startswith("guides/approvals.md"):
        state = namespace["graph"].get_state({"configurable": {"thread_id": "refund-7"}})
        assert state.values == {"amount": 120, "approved": True, "by": "alice"}
        assert state.next == ()
    if name.startswith("getting-started.md"):
        assert namespace["result"] == {"question": "ship it?", "answer": "yes"}
