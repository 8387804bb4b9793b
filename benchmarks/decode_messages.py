"""Decoding message lists: our savers' read path (``loads_exact``) vs LangGraph's serializer.

300 messages of each kind (plain AI messages, tool-calling AI messages, tool
messages, and a mixed agent history), each list decoded in turns by
``serde.loads_typed`` and by ``loads_exact`` (the cheap build of plain
messages, checkpointers/_fast_messages.py); medians and the ratio.

    PYTHONPATH=. python benchmarks/decode_messages.py [--reps 60]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_durable.checkpointers._serde import default_serde, loads_exact


def _lists() -> dict[str, list[Any]]:
    calls = [
        AIMessage(
            "", id=f"a{i}", tool_calls=[{"name": "f", "args": {"q": "x" * 50}, "id": f"t{i}"}]
        )
        for i in range(300)
    ]
    tools = [ToolMessage("r" * 100, tool_call_id=f"t{i}") for i in range(300)]
    plain = [AIMessage("x" * 200, id=f"p{i}") for i in range(300)]
    mixed: list[Any] = []
    for i in range(75):
        mixed += [HumanMessage("q" * 100, id=f"h{i}"), calls[i], tools[i], plain[i]]
    return {
        "plain AIMessage": plain,
        "tool-calling AIMessage": calls,
        "ToolMessage": tools,
        "agent mix": mixed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=60)
    args = parser.parse_args()
    serde = default_serde()
    for label, msgs in _lists().items():
        type_, data = serde.dumps_typed(msgs)
        assert loads_exact(serde, type_, data) == serde.loads_typed((type_, data))
        theirs: list[float] = []
        ours: list[float] = []
        for _ in range(args.reps):
            t = time.perf_counter()
            serde.loads_typed((type_, data))
            theirs.append(time.perf_counter() - t)
            t = time.perf_counter()
            loads_exact(serde, type_, data)
            ours.append(time.perf_counter() - t)
        a, b = statistics.median(theirs) * 1000, statistics.median(ours) * 1000
        print(f"{label:24s} serializer {a:.2f} ms  ours {b:.2f} ms  ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
