"""Operator commands: ``inspect``, ``audit``, ``approve`` and ``reject`` of one THREAD."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from langgraph_durable.interrupts._cli_actions import ThreadCall, approval_options, thread_command
from langgraph_durable.interrupts._cli_common import (
    CliError,
    command,
    console,
    open_saver,
    url_option,
)
from langgraph_durable.interrupts._cli_options import graph_option
from langgraph_durable.interrupts._records import section


def state_text(st: Any) -> str:
    """One line: running (owner, age), waiting (for what, until), orphaned, parked, finished."""
    parts = [st.state]
    if st.state == "waiting":
        kinds = ", ".join(st.waiting_for) or "an interrupt"
        until = f" until {st.deadline:%Y-%m-%d %H:%M} UTC" if st.deadline else ""
        parts.append(f"for {kinds}{until}")
    if st.owner and st.state in ("running", "orphaned", "parked"):
        age = f", {int(st.age.total_seconds())} s" if st.age is not None else ""
        parts.append(f"(lease owner {st.owner}{age})")
    if st.recoveries:
        parts.append(f"recovered {st.recoveries}x")
    if st.last_error and st.state in ("parked", "failed", "orphaned"):
        parts.append(f"last error: {st.last_error}")
    return " ".join(parts)


def _decision_text(d: dict[str, Any] | None, resumed: bool) -> str:
    if not d:
        return "resumed" if resumed else "waiting"
    if d.get("type") == "escalate":
        return f"escalated to {', '.join(d.get('to') or []) or 'anyone'}"
    if d.get("type") == "amend":
        return f"{d.get('operator_action') or 'changed'} by {d.get('by')}: asked again"
    verdict = {"edit": "approved (edited)", "respond": "answered", "cancel": "cancelled"}.get(
        str(d.get("action")), "approved" if d.get("approved") else "rejected"
    )
    who = "timeout rule" if d.get("timed_out") else d.get("by")
    return f"{verdict} by {who} at {d.get('at')}"


@command()
@url_option
@click.argument("thread")
@click.option(
    "--ns",
    "checkpoint_ns",
    default="",
    show_default=True,
    help="Checkpoint namespace (subgraph) to show.",
)
def inspect(url: str, thread: str, checkpoint_ns: str) -> None:
    """A timeline of THREAD's checkpoints: step, nodes, schema version, interrupts, decisions."""
    from langgraph_durable.interrupts._thread_states import thread_state
    from langgraph_durable.interrupts._timeline import thread_timeline

    with open_saver(url) as saver:
        try:
            entries = thread_timeline(saver, thread, checkpoint_ns=checkpoint_ns)
        except KeyError:
            raise CliError(f"unknown thread {thread!r}: no checkpoints stored") from None
        state = thread_state(saver, thread)
    table = Table(title=f"thread {thread}")
    for col in ("step", "source", "nodes", "schema", "checkpoint", "interrupts / decisions"):
        table.add_column(col)
    for e in entries:
        notes = []
        for i in e.interrupts:
            deadline = f" until {i.deadline:%Y-%m-%d %H:%M} UTC" if i.deadline else ""
            who = f" for {', '.join(i.approvers)}" if i.approvers else ""
            notes.append(
                f"{i.kind or 'interrupt'} {i.interrupt_id[:8]}{who}{deadline}: "
                f"{_decision_text(i.decision, i.resumed)}"
            )
        if e.compensations:
            notes.append(f"compensation: {e.compensations}")
        notes += [f"audit: {_audit_text(a)}" for a in e.audit]
        table.add_row(
            str(e.step),
            e.source or "",
            ", ".join(e.nodes),
            str(e.schema_version),
            e.checkpoint_id,
            "\n".join(notes),
        )
    console().print(table)
    click.echo(f"state: {state_text(state)}")
    _requests_and_decisions(entries)


def _requests_and_decisions(entries: list[Any]) -> None:
    """Each interrupt's full request payload, and every decision with its comment and edits."""
    seen: set[str] = set()
    for e in entries:
        for i in e.interrupts:
            if i.interrupt_id in seen or i.kind not in ("approval", "batch"):
                continue
            seen.add(i.interrupt_id)
            status = "answered" if i.decision or i.resumed else "waiting"
            click.echo(f"\n{i.kind} {i.interrupt_id} ({status}):")
            sec = section(i.value)
            shown = sec.get("request") if i.kind == "approval" else sec.get("items")
            click.echo(
                "  request: " + json.dumps(shown, indent=2, default=str).replace("\n", "\n  ")
            )
            if sec.get("allowed_decisions"):
                click.echo(f"  allowed: {', '.join(sec['allowed_decisions'])}")
            if i.decision:
                click.echo(f"  decision: {_decision_detail(i.decision)}")
            for key, rec in sorted(i.item_decisions.items()):
                click.echo(f"  item {key}: {_decision_detail(rec)}")


def _decision_detail(d: dict[str, Any]) -> str:
    """A decision record in one line: what, who, when, the comment, edited arguments, text."""
    if d.get("type") == "amend":
        what = d.get("operator_action") or "amend"
        change = d.get("deadline") if what == "extend" else ", ".join(d.get("to") or [])
        text = f"{what} by {d.get('by')} at {d.get('at')}: {change}"
    elif d.get("type") == "escalate":
        text = f"escalated to {', '.join(d.get('to') or []) or 'anyone'} at {d.get('at')}"
    else:
        kind = d.get("action") or ("approve" if d.get("approved") else "reject")
        who = "timeout rule" if d.get("timed_out") else d.get("by")
        text = f"{kind} by {who} at {d.get('at')}"
        if d.get("via"):
            text += f" (via {d['via']})"
    if d.get("comment"):
        text += f"; comment: {d['comment']!r}"
    if d.get("edited") is not None:
        text += f"; edited arguments: {json.dumps(d['edited'], default=str)}"
    if d.get("response"):
        text += f"; response: {d['response']!r}"
    return text


def _audit_text(a: Any) -> str:
    """One line of an audit entry: when, who, what, how it ended, why."""
    what = a.action + (f" {a.item}" if a.item else "")
    why = f" ({a.reason})" if a.reason else ""
    return f"{a.at:%Y-%m-%d %H:%M:%S} {a.actor} {what}: {a.outcome}{why}"


@command("audit")
@url_option
@click.argument("thread")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, not a table.")
@click.option(
    "--verify",
    is_flag=True,
    help="Check the trail's hash chain instead: one line, exit 1 if a link is broken.",
)
def audit_cmd(url: str, thread: str, as_json: bool, verify: bool) -> None:
    """THREAD's audit trail, oldest first: every decision attempt, timeout, re-ask and undo.

    Entries hold a fingerprint of the request payload, never the payload. The
    trail outlives the thread (delete_thread keeps it); it is read even after
    the thread is gone. With --verify, every entry's link to the one before is
    recomputed: the line names the first broken one (its seq, and whether an
    entry was altered, is missing or was forged), or says the chain is intact.
    """
    from langgraph_durable.interrupts._audit_calls import audit_log

    if verify:
        _verify(url, thread, as_json)
        return
    with open_saver(url) as saver:
        trail = audit_log(saver, thread_id=thread)
        known = bool(trail) or saver.get_tuple({"configurable": {"thread_id": thread}})
    if not known:
        raise CliError(f"unknown thread {thread!r}: no checkpoints and no audit entries stored")
    if as_json:
        for a in trail:
            click.echo(a.model_dump_json())
        return
    table = Table(title=f"audit trail of thread {thread}")
    for col in (
        "seq",
        "at (UTC)",
        "actor",
        "action",
        "approval",
        "item",
        "outcome",
        "reason",
        "fingerprint",
    ):
        table.add_column(col)
    for a in trail:
        table.add_row(
            str(a.seq),
            f"{a.at:%Y-%m-%d %H:%M:%S}",
            a.actor,
            a.action,
            (a.approval_id or "")[:8],
            a.item or "",
            a.outcome,
            a.reason or "",
            (a.fingerprint or "")[:19],
        )
    console().print(table)
    click.echo(f"{len(trail)} entries")


def _verify(url: str, thread: str, as_json: bool) -> None:
    """``audit THREAD --verify``: the chain's report, one line; exit 1 when broken."""
    import dataclasses

    from langgraph_durable.interrupts._audit_calls import verify_audit

    with open_saver(url) as saver:
        report = verify_audit(saver, thread)
        known = report.entries or report.head_position or report.purged
        known = known or saver.get_tuple({"configurable": {"thread_id": thread}})
    if not known:
        raise CliError(f"unknown thread {thread!r}: no checkpoints and no audit entries stored")
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(report), default=str))
        if not report.intact:
            raise SystemExit(1)
        return
    if not report.intact:
        raise CliError(report.summary())
    click.echo(report.summary())


def _decide(call: ThreadCall, approved: bool, comment: str | None, edit_json: str | None) -> None:
    edited = parse_json(edit_json, "--edit") if edit_json is not None else None
    fn, kwargs = _decision_call(approved, edit_json is not None, edited)
    kwargs.update(call.kwargs(), comment=comment)
    _, state = call.run(lambda t, c, r: fn(t, c, resume=r, **kwargs))
    _echo_verdict(call.thread, call.by, approved, edit_json is not None, state)


def _decision_call(approved: bool, edits: bool, edited: Any) -> tuple[Any, dict[str, Any]]:
    """The helper that records the decision, and its arguments for the edit if any.

    An approval with --edit runs the edited arguments (``edit``); a rejection
    with --edit names the arguments the decider would accept.
    """
    from langgraph_durable.interrupts import approve, edit, reject

    if edits and approved:
        return edit, {"args": edited}
    if edits:
        return reject, {"edited": edited}
    return (approve if approved else reject), {}


def _echo_verdict(thread: str, by: str, approved: bool, edits: bool, state: Any) -> None:
    """What was decided, and where the run stands now (or that a sweep resumes it)."""
    verdict = "approved" if approved else "rejected"
    if edits:
        verdict += (
            " with edited arguments" if approved else " (with the arguments you would accept)"
        )
    if state is None:
        click.echo(
            f"{verdict} thread {thread} as {by}: decision recorded; the next sweep "
            "(`langgraph-durable worker` or `sweep`) resumes the run"
        )
        return
    waiting = f"; now waiting at {list(state.next)}" if state.next else "; the run completed"
    click.echo(f"{verdict} thread {thread} as {by}{waiting}")


def parse_json(text: str, option: str) -> Any:
    """A JSON option's value, or a one-line error naming the option."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{option} is not JSON: {exc}") from None


_DECISION_OPTIONS = (
    graph_option(
        "The graph the thread runs: the run resumes in this process. Without it the "
        "decision is recorded and the next sweep (worker/sweep command) resumes the run."
    ),
    click.option("--by", required=True, help="Who decides (user id)."),
    click.option("--comment", default=None, help="Free text stored with the decision."),
    *approval_options(
        which="Which approval, when the thread has several pending.",
        roles="Roles of the decider (repeatable).",
        resume="With --graph: resume the run here, or only record the decision.",
    ),
    click.option(
        "--edit",
        "edit_json",
        default=None,
        metavar="JSON",
        help="approve: run these arguments instead of the request's (an edit decision); "
        "reject: keep them with the rejection as what you would accept.",
    ),
)


@thread_command("approve", _DECISION_OPTIONS, "by")
def approve_cmd(call: ThreadCall, comment: str | None, edit_json: str | None) -> None:
    """Approve THREAD's pending approval (exactly once); resume the run with --graph."""
    _decide(call, True, comment, edit_json)


@thread_command("reject", _DECISION_OPTIONS, "by")
def reject_cmd(call: ThreadCall, comment: str | None, edit_json: str | None) -> None:
    """Reject THREAD's pending approval (exactly once); resume the run with --graph."""
    _decide(call, False, comment, edit_json)
