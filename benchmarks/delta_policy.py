"""Compare snapshot policies of delta storage without a database.

One channel appends one message of 1 KiB of incompressible text per step (the
issue's benchmark thread); every version goes through ``encode_value`` with
the saver's serde. Prints, per policy, the value bytes stored over the
payload, and the chain a read of the newest version walks.

    python benchmarks/delta_policy.py --steps 300 3000
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage

from langgraph_durable.checkpointers._delta import DeltaPolicy, Link, encode_value
from langgraph_durable.checkpointers._serde import default_serde


def simulate(
    steps: int, policy: DeltaPolicy | None, interval: int | None = None
) -> dict[str, float]:
    serde = default_serde()
    value: list[AIMessage] = []
    link: Link | None = None
    stored = payload = 0
    depths: list[int] = []
    for i in range(steps):
        msg = AIMessage(content=os.urandom(512).hex(), id=f"m{i}")
        payload += 1024
        value = [*value, msg]
        type_, data = serde.dumps_typed(value)
        version = f"{i + 1:032}.{0:016}"
        if policy is None:  # fixed interval
            full = link is None or (i % interval == 0)
            pol = DeltaPolicy(ratio=1e18, max_depth=None if not full else 0)
            st, link = encode_value(None if full else link, version, type_, data, pol)
        else:
            st, link = encode_value(link, version, type_, data, policy)
        stored += len(st.blob) + 64
        depths.append(link.depth if link else 0)
    return {
        "stored/payload": stored / payload,
        "max_depth": max(depths),
        "mean_depth": sum(depths) / len(depths),
        "last_depth": depths[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[300, 3000])
    args = parser.parse_args()
    policies: list[tuple[str, DeltaPolicy | None, int | None]] = [
        ("full copies", DeltaPolicy(max_depth=0), None),
        ("every 32 versions", None, 32),
        ("ratio 0.5", DeltaPolicy(ratio=0.5), None),
        ("ratio 1 (default)", DeltaPolicy(ratio=1.0), None),
        ("ratio 2", DeltaPolicy(ratio=2.0), None),
        ("ratio 4", DeltaPolicy(ratio=4.0), None),
        ("ratio 1, max_depth 64", DeltaPolicy(ratio=1.0, max_depth=64), None),
    ]
    print("| policy | steps | value bytes / payload | max chain | mean chain | chain at end |")
    print("|---|---|---|---|---|---|")
    for steps in args.steps:
        for name, pol, interval in policies:
            r = simulate(steps, pol, interval)
            print(
                f"| {name} | {steps} | {r['stored/payload']:.2f} | {r['max_depth']} "
                f"| {r['mean_depth']:.0f} | {r['last_depth']} |"
            )


if __name__ == "__main__":
    main()
