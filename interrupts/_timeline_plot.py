"""Draw a thread's timeline on a time axis (the ``notebooks`` extra: matplotlib).

The events come from what :func:`~langgraph_durable.interrupts.thread_timeline`
read: checkpoint times, the interrupts pending at them (with deadlines and
decisions) and the audit trail. All of them are placed by their own timestamps,
so a thread that waited hours shows the wait as hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langgraph_durable.interrupts._audit import AuditEntry
from langgraph_durable.interrupts._timeline import TimelineEntry, TimelineInterrupt

# what each kind of event looks like: (marker, colour); the legend lists those drawn
STYLES: dict[str, tuple[str, str]] = {
    "checkpoint": ("|", "#7f7f7f"),
    "asked": ("o", "#dd8452"),
    "deadline": ("x", "#555555"),
    "escalated": ("^", "#e5ae38"),
    "approved": ("s", "#55a868"),
    "rejected": ("s", "#c44e52"),
    "resumed": ("D", "#4c72b0"),
    "compensated": ("v", "#8172b2"),
    "undo failed": ("X", "#c44e52"),
    "retry / skip / abort": ("P", "#937860"),
}
LANES = {"steps": 0.0, "pauses": 1.0, "compensation": 2.0}


@dataclass
class Event:
    """One mark on the picture."""

    at: datetime
    kind: str
    lane: str
    label: str = ""


@dataclass
class Pause:
    """A span during which the thread waited at an interrupt."""

    start: datetime
    end: datetime
    label: str
    open: bool


def _utc(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, str) and value:
        try:
            return _utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def _approval_marks(trail: list[AuditEntry], approval_id: str) -> list[Event]:
    """Escalations and decisions recorded in the audit trail for one approval."""
    out = []
    for a in trail:
        if a.approval_id != approval_id or a.outcome != "recorded" or a.item:
            continue
        if a.action == "escalate":
            out.append(Event(a.at, "escalated", "pauses", "escalated"))
        elif a.action in ("approve", "reject"):
            kind = "approved" if a.action == "approve" else "rejected"
            who = "the timeout rule" if a.actor == "system" else a.actor
            out.append(Event(a.at, kind, "pauses", f"{kind} by {who}"))
    return out


def _pause(
    asked: datetime,
    where: str,
    pending: tuple[TimelineEntry, TimelineEntry | None, TimelineInterrupt] | None,
    trail: list[AuditEntry],
    approval_id: str,
) -> tuple[list[Event], Pause]:
    label = f"paused in {where}"
    if pending is not None and pending[2].approvers:
        label += f", asks {', '.join(pending[2].approvers)}"
    events = [Event(asked, "asked", "pauses", label)]
    events += _approval_marks(trail, approval_id)
    end: datetime | None = None
    if pending is not None:
        _entry, nxt, i = pending
        if i.deadline is not None:
            events.append(Event(_utc(i.deadline) or asked, "deadline", "pauses", "deadline"))
        if i.resumed and nxt is not None:
            end = _utc(nxt.ts)
            if end is not None:
                events.append(Event(end, "resumed", "pauses", "resumed"))
    marks = [e.at for e in events if e.kind in ("escalated", "approved", "rejected")]
    if end is None and marks:
        end = max(marks)  # an escalated level ends when the next level is asked
    return events, Pause(asked, end or asked, label, end is None)


def _pauses(
    entries: list[TimelineEntry], trail: list[AuditEntry]
) -> tuple[list[Event], list[Pause]]:
    pending = {}
    for n, e in enumerate(entries):
        nxt = entries[n + 1] if n + 1 < len(entries) else None
        for i in e.interrupts:
            pending[i.interrupt_id] = (e, nxt, i)
    # every approval asked, in order, also the levels an escalation replaced
    asked: dict[str, datetime] = {}
    for a in trail:
        if a.action == "request" and a.approval_id and a.approval_id not in asked:
            asked[a.approval_id] = a.at
    for iid, (e, _nxt, _i) in pending.items():
        ts = _utc(e.ts)
        if iid not in asked and ts is not None:
            asked[iid] = ts  # a plain interrupt() or an undo report: no request entry
    events: list[Event] = []
    pauses: list[Pause] = []
    known = [" or ".join(p[0].next_nodes) for p in pending.values() if p[0].next_nodes]
    where = known[0] if known else "?"
    for iid, at in sorted(asked.items(), key=lambda kv: kv[1]):
        hold = pending.get(iid)
        if hold is not None and hold[0].next_nodes:
            where = " or ".join(hold[0].next_nodes)
        marks, pause = _pause(at, where, hold, trail, iid)
        events += marks
        pauses.append(pause)
    return events, pauses


def _saga_events(trail: list[AuditEntry]) -> list[Event]:
    out = []
    for a in trail:
        step = (a.item or "").split(":")[0].rsplit(".", 1)[-1]
        if a.action == "undo":
            kind = "compensated" if a.outcome == "compensated" else "undo failed"
            label = f"undo {step}" + ("" if kind == "compensated" else " failed")
            out.append(Event(a.at, kind, "compensation", label))
        elif a.action in ("retry", "skip", "abort"):
            label = f"{a.action} by {a.actor}"
            out.append(Event(a.at, "retry / skip / abort", "compensation", label))
    return out


def timeline_events(entries: list[TimelineEntry]) -> tuple[list[Event], list[Pause]]:
    """The marks and pauses :func:`plot_timeline` draws, oldest first."""
    trail = sorted({a.seq: a for e in entries for a in e.audit}.values(), key=lambda a: a.seq)
    events: list[Event] = []
    for e in entries:
        ts = _utc(e.ts)
        if ts is not None:
            events.append(Event(ts, "checkpoint", "steps", ", ".join(e.nodes)))
    marks, pauses = _pauses(entries, trail)
    events += marks + _saga_events(trail)
    events.sort(key=lambda ev: ev.at)
    last = max((ev.at for ev in events), default=None)
    for p in pauses:
        if p.open and last is not None:
            p.end = max(last, p.start)  # still waiting: drawn up to the newest event
    return events, pauses


def _num(at: datetime) -> float:
    import matplotlib.dates as mdates

    # matplotlib's own number for a datetime (its stubs leave date2num untyped)
    return float(mdates.date2num(at))  # type: ignore[no-untyped-call]


# label heights above (+) and below (-) a lane, in points; a label close in time to the
# previous one of its lane takes the next height, so neighbours do not overlap
HEIGHTS = (10, 22, -18, 34, -30, 46)


def _draw_labels(ax: Any, events: list[Event]) -> None:
    labelled = [e for e in events if e.label]
    if not labelled:
        return
    span = (_num(labelled[-1].at) - _num(labelled[0].at)) or 1.0
    last: dict[str, tuple[float, int]] = {}
    for ev in labelled:
        x = _num(ev.at)
        prev = last.get(ev.lane)
        level = (prev[1] + 1) % len(HEIGHTS) if prev and x - prev[0] < 0.12 * span else 0
        last[ev.lane] = (x, level)
        ax.annotate(
            ev.label, (x, LANES[ev.lane]), xytext=(0, HEIGHTS[level]),
            textcoords="offset points", ha="center", va="center", fontsize=7,
            color=STYLES[ev.kind][1],
        )  # fmt: skip


def plot_timeline(entries: list[TimelineEntry], *, title: str | None = None) -> Any:
    """Draw a thread's timeline with matplotlib (the ``notebooks`` extra).

    A time axis with three lanes: the checkpoints (labelled with the nodes that
    produced them), the pauses at approvals and other interrupts (asked,
    deadline, escalated, approved or rejected and by whom, resumed; a bar for
    each wait, labelled with the node that paused) and compensation (undos done
    or failed, and a human's retry, skip or abort). A legend names each mark.
    Times are those stored: a test clock given to the helpers shows as its own
    time, apart from the checkpoints' wall clock.

    Args:
        entries: What :func:`~langgraph_durable.interrupts.thread_timeline` returned.
        title: Shown above the picture.

    Returns:
        The matplotlib ``Figure``.
    """
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    events, pauses = timeline_events(entries)
    fig, ax = plt.subplots(figsize=(10.0, 3.6))
    for p in pauses:
        ax.plot([_num(p.start), _num(p.end)], [1.0, 1.0], color="#dd8452", alpha=0.35, linewidth=8)
    drawn: dict[str, Any] = {}
    for ev in events:
        marker, color = STYLES[ev.kind]
        drawn[ev.kind] = ax.scatter(
            [_num(ev.at)], [LANES[ev.lane]], marker=marker, color=color, s=60
        )
    _draw_labels(ax, events)
    ax.set_yticks(list(LANES.values()), list(LANES))
    ax.set_ylim(-0.7, 2.8)
    # matplotlib's stubs leave the date locator and formatter untyped
    locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    # seconds or days apart alike: ticks and labels follow the span drawn
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.set_xlabel("time (UTC)")
    ax.grid(axis="x", color="#eeeeee")
    kinds = [k for k in STYLES if k in drawn]
    ax.legend([drawn[k] for k in kinds], kinds, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=7, frameon=False)  # fmt: skip
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
