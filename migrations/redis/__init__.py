"""Storage-layout steps of the Redis saver, as data (no redis import).

Each step is ``NNNN_name.json``: ``{"version": N, "name": ..., "description": ...,
"thread_script": null | "NNNN_name.lua"}``. ``setup()`` of the Redis saver
applies the steps newer than the prefix's layout version, in order, under a
lock (``SET NX PX``); a step's ``thread_script`` (a Lua file next to it) runs
once per registered thread with that thread's keys, then the version is bumped.
Steps are append-only: never edit one that is on main, add the next number.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def steps() -> list[dict[str, Any]]:
    """Every layout step, oldest first, with ``thread_script`` replaced by its Lua source."""
    found = []
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".json") and entry.name[:4].isdigit():
            step = json.loads(entry.read_text(encoding="utf-8"))
            if step.get("thread_script"):
                step["thread_script"] = (
                    resources.files(__name__).joinpath(step["thread_script"]).read_text("utf-8")
                )
            step["file"] = entry.name
            found.append(step)
    found.sort(key=lambda s: int(s["version"]))
    for i, step in enumerate(found, start=1):
        if int(step["version"]) != i:
            raise RuntimeError(f"redis layout steps must be numbered 1..N, got {step['file']}")
    return found


def latest_version() -> int:
    """The newest layout version this code knows."""
    return len(steps())


__all__ = ["latest_version", "steps"]
