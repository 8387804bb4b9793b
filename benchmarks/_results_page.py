"""The part of docs/benchmarks.md that ``run_all.py`` writes: current figures, dated.

The page's own text (what each script measures, its command) stays as it is
written; the figures go between :data:`BEGIN` and :data:`END`, one block per
benchmark. A run replaces the blocks of the benchmarks it ran and keeps the
others, each with the date and load of the run that made it, so
``run_all.py --only X`` refreshes one figure without dropping the rest.
"""

from __future__ import annotations

import re
from typing import Any

BEGIN = "<!-- run_all: begin (written by benchmarks/run_all.py: edit the text above it) -->"
END = "<!-- run_all: end -->"
_BLOCK = re.compile(r"<!-- run_all:([\w-]+) -->\n(.*?)\n<!-- /run_all:\1 -->", re.S)

INTRO = [
    "## Current figures",
    "",
    "Written by `python benchmarks/run_all.py`, which reruns the benchmarks above one after",
    "the other (`--only KEY,...` reruns some; `--quick` is a smoke run, best written elsewhere",
    "with `--out`). Each block says when it ran and the load average (1, 5, 15 minutes) before",
    "and after it. Every benchmark runs its contenders in one process, interleaved; on a loaded",
    "machine compare the ratios within one block, not absolute times.",
]


def block(key: str, lines: list[str]) -> str:
    """One block of the figures, delimited so a later run can replace it."""
    text = "\n".join(lines).strip("\n")
    return f"<!-- run_all:{key} -->\n{text}\n<!-- /run_all:{key} -->"


def job_block(result: dict[str, Any]) -> list[str]:
    """The lines of one benchmark's result."""
    job = result["job"]
    status = "" if result["code"] == 0 else f", **exit status {result['code']}**"
    return [
        f"### {job.key}",
        "",
        job.what + ".",
        "",
        f"`{result['command']}`, run {result['when']} ({result['seconds']:.0f} s; load "
        f"{result['load'][0]} before, {result['load'][1]} after{status})",
        "",
        "```text",
        result["summary"],
        "```",
    ]


def merge(page: str, blocks: dict[str, list[str]], order: list[str]) -> str:
    """``page`` with ``blocks`` replacing blocks of the same key; others kept, in ``order``."""
    if BEGIN in page and END in page:
        before, rest = page.split(BEGIN, 1)
        section, after = rest.split(END, 1)
    else:
        before, section, after = page.rstrip("\n") + "\n\n", "", "\n"
    kept = {m.group(1): m.group(2) for m in _BLOCK.finditer(section)}
    kept.update({k: "\n".join(v).strip("\n") for k, v in blocks.items()})
    keys = [k for k in order if k in kept] + [k for k in kept if k not in order]
    body = "\n\n".join(block(k, [kept[k]]) for k in keys)
    return before + BEGIN + "\n" + "\n".join(INTRO) + "\n\n" + body + "\n" + END + after
