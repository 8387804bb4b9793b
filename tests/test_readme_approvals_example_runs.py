"""The README's main approvals example runs exactly as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(after: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(after)
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match is not None, f"no python block after {after!r}"
    return match.group(1)


def test_the_from_python_example_runs() -> None:
    code = _block("### From Python")
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(code, "README.md (From Python)", "exec"), namespace)
    graph: Any = namespace["graph"]
    state = graph.get_state({"configurable": {"thread_id": "refund-7"}})
    assert state.values == {"amount": 120, "approved": True, "by": "alice"}
    assert state.next == ()


def test_the_agent_node_is_valid_python() -> None:
    code = _block("### Answer from Studio, Agent Inbox or any LangGraph client")
    compile(code, "README.md (agent.py)", "exec")
