"""A thread's timeline drawn on a real time axis, as inline SVG (no script, no build step)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

WIDTH = 720
LANE = 26
LEFT = 96
RIGHT = 24
TOP = 14
COLOURS = {
    "asked": "#2563eb",
    "escalated": "#d97706",
    "decided": "#059669",
    "refused": "#dc2626",
    "resumed": "#7c3aed",
    "compensated": "#b45309",
    "checkpoint": "#9ca3af",
}
LANES = tuple(COLOURS)


@dataclass(frozen=True)
class Event:
    """One point on the timeline."""

    at: datetime
    kind: str
    label: str


def _kind(entry: Any) -> str | None:
    if entry.outcome == "waiting" or entry.action in ("request", "reask"):
        return "asked"
    if entry.action == "escalate":
        return "escalated"
    if entry.action == "undo" or entry.outcome == "compensated":
        return "compensated"
    if entry.outcome == "recorded":
        return "decided"
    if entry.outcome in ("not_authorized", "already_decided", "not_allowed", "link_refused"):
        return "refused"
    return None


def events_of(timeline: list[Any], audit: list[Any]) -> list[Event]:
    """Asked, escalated, decided, refused, resumed, compensated; and each checkpoint."""
    out: list[Event] = []
    for entry in audit:
        kind = _kind(entry)
        if kind is not None:
            out.append(Event(entry.at, kind, f"{entry.action} by {entry.actor}"))
    for n, step in enumerate(timeline):
        if not step.ts:
            continue
        at = datetime.fromisoformat(step.ts)
        out.append(Event(at, "checkpoint", f"step {step.step} {' '.join(step.nodes)}".strip()))
        earlier = timeline[n - 1] if n else None
        if earlier is not None and any(i.decision for i in earlier.interrupts):
            out.append(Event(at, "resumed", f"resumed: {' '.join(step.nodes) or 'run'}"))
    return sorted(out, key=lambda e: e.at)


def _ticks(t0: datetime, t1: datetime, span: float) -> list[tuple[float, str]]:
    fmt = "%H:%M:%S" if span < 86_400 else "%m-%d %H:%M"
    count = 4
    out = []
    for k in range(count + 1):
        at = datetime.fromtimestamp(t0.timestamp() + span * k / count, tz=t0.tzinfo)
        x = LEFT + (WIDTH - LEFT - RIGHT) * k / count
        # seconds apart: tenths tell the ticks apart
        label = at.strftime(fmt) + (f".{at.microsecond // 100_000}" if span < 10 else "")
        out.append((x, label))
    return out


def timeline_svg(events: list[Event]) -> str:
    """The SVG markup: one lane per kind of event, x proportional to time."""
    if not events:
        return '<p class="muted">No events yet.</p>'
    t0, t1 = events[0].at, events[-1].at
    span = max((t1 - t0).total_seconds(), 1.0)
    height = TOP + LANE * len(LANES) + 30
    parts = [
        f'<svg class="timeline" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="timeline from {escape(t0.isoformat())} to {escape(t1.isoformat())}">'
    ]
    for n, lane in enumerate(LANES):
        y = TOP + LANE * n + LANE / 2
        parts.append(
            f'<text x="4" y="{y + 4:.0f}" class="lane">{lane}</text>'
            f'<line x1="{LEFT}" y1="{y:.0f}" x2="{WIDTH - RIGHT}" y2="{y:.0f}" class="rule"/>'
        )
    axis_y = TOP + LANE * len(LANES) + 4
    ticks = _ticks(t0, t1, span)
    for n, (x, label) in enumerate(ticks):
        # the last label ends at its tick, so the right edge never cuts it
        anchor = "end" if n == len(ticks) - 1 else "middle"
        parts.append(
            f'<line x1="{x:.0f}" y1="{TOP}" x2="{x:.0f}" y2="{axis_y}" class="tick"/>'
            f'<text x="{x:.0f}" y="{axis_y + 16}" text-anchor="{anchor}" class="axis">'
            f"{escape(label)}</text>"
        )
    for e in events:
        x = LEFT + (WIDTH - LEFT - RIGHT) * (e.at - t0).total_seconds() / span
        y = TOP + LANE * LANES.index(e.kind) + LANE / 2
        title = escape(f"{e.at.isoformat()} {e.kind}: {e.label}")
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.0f}" r="6" fill="{COLOURS[e.kind]}" '
            f'data-kind="{e.kind}"><title>{title}</title></circle>'
        )
    parts.append("</svg>")
    return "".join(parts)
