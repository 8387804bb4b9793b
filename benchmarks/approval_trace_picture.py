"""Draw the demo's approval story as a trace timeline (docs/images/approval-trace.png).

The demo's three roles run as three processes, as ``langgraph-durable demo``
runs them: the agent asks for approval and exits, the operator records
alice's decision with the saver alone, the worker's sweeper resumes the run.
Each process runs the real OpenTelemetry SDK with an in-memory exporter
(``tests/_otel_capture.py``) and writes its spans to one file; this script
reads them back and draws one row per span of the library (the saver calls of
each process on one row), coloured by process, with the span links from the
decision and the resume back to the request.

Usage::

    python benchmarks/approval_trace_picture.py                # Postgres, docs/images/
    python benchmarks/approval_trace_picture.py --out /tmp/trace.png --spans /tmp/spans.jsonl

Server: ``POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``),
in a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
ROLES = ("agent", "operator", "worker")
COLOURS = {"agent": "#4C72B0", "operator": "#DD8452", "worker": "#55A868"}


def run_story(spans: Path, url: str) -> None:
    """The three roles, one process each, appending their spans to ``spans``."""
    env = {**os.environ, "LANGGRAPH_DURABLE_URL": url, "PYTHONPATH": str(ROOT)}
    for role in ROLES:
        subprocess.run(
            [sys.executable, "-m", "tests._otel_capture", str(spans), role, "--thread", "refund-1"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )


def _rows(spans: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """One row per helper span, one row of saver calls per process, in time order."""
    rows: list[tuple[str, list[dict[str, Any]]]] = []
    for role in ROLES:
        mine = sorted((s for s in spans if s["role"] == role), key=lambda s: s["start"])
        for s in mine:
            if not s["name"].startswith("checkpoint."):
                rows.append((f"{role}: {s['name']}", [s]))
        calls = [s for s in mine if s["name"].startswith("checkpoint.")]
        if calls:
            rows.append(
                (f"{role}: checkpoint.* ({len(calls)} call{'s' if len(calls) != 1 else ''})", calls)
            )
    return rows


def draw(spans: list[dict[str, Any]], out: Path) -> None:
    """Render the timeline to ``out`` (PNG): one panel per process, each in its own time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import ConnectionPatch

    t0 = min(s["start"] for s in spans)
    rows = _rows(spans)
    fig, axes = plt.subplots(
        1, len(ROLES), sharey=True, figsize=(12, 0.42 * len(rows) + 1.8), squeeze=False
    )
    where: dict[str, tuple[Any, float, int]] = {}
    for ax, role in zip(axes[0], ROLES, strict=True):
        mine = [s for s in spans if s["role"] == role]
        first, last = min(s["start"] for s in mine), max(s["end"] for s in mine)
        for y, (_label, members) in enumerate(rows):
            for s in members:
                if s["role"] != role:
                    continue
                start = (s["start"] - first) / 1e6
                width = max((s["end"] - s["start"]) / 1e6, (last - first) / 1e6 / 300)
                ax.barh(y, width, left=start, height=0.6, color=COLOURS[role], alpha=0.9)
                where[s["span_id"]] = (ax, start + width / 2, y)
        ax.set_xlim(-(last - first) / 1e6 * 0.05, (last - first) / 1e6 * 1.05)
        ax.set_xlabel("ms", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_title(f"{role} process, at +{(first - t0) / 1e9:.1f} s", fontsize=9)
    axes[0][0].set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=8)
    axes[0][0].invert_yaxis()
    for s in spans:
        for link in s["links"]:
            if link["span_id"] in where and s["span_id"] in where:
                ax0, x0, y0 = where[link["span_id"]]
                ax1, x1, y1 = where[s["span_id"]]
                fig.add_artist(
                    ConnectionPatch(
                        (x0, y0),
                        (x1, y1),
                        "data",
                        "data",
                        axesA=ax0,
                        axesB=ax1,
                        arrowstyle="->",
                        color="#555",
                        linestyle="--",
                        lw=1,
                    )
                )
    traces = len({s["trace_id"] for s in spans if s["name"].startswith("approval.")})
    fig.suptitle(
        f"The demo's approval story: {len(ROLES)} processes, {traces} traces; the decision "
        "and the resume link back to the request (dashed arrows).\nThe operator decides "
        "20 simulated minutes after the request; times are each process's own.",
        fontsize=9,
    )
    fig.subplots_adjust(left=0.22, right=0.98, top=0.82, bottom=0.12, wspace=0.08)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs/images/approval-trace.png")
    parser.add_argument("--spans", type=Path, default=None, help="keep the spans file here")
    args = parser.parse_args()
    import psycopg
    from psycopg import sql

    schema = f"trace_demo_{uuid.uuid4().hex[:8]}"
    spans_file = args.spans or Path(tempfile.mkdtemp()) / "spans.jsonl"
    spans_file.unlink(missing_ok=True)
    sep = "&" if "?" in PG_URL else "?"
    try:
        run_story(spans_file, f"{PG_URL}{sep}schema={schema}")
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    draw(spans, args.out)
    print(f"{len(spans)} spans from {len({s['pid'] for s in spans})} processes -> {args.out}")


if __name__ == "__main__":
    main()
