"""Commands on one waiting approval beside approve/reject: respond, extend, reassign, remind,
cancel.

Each is authorized by the same policy as a decision (with --graph, the graph's
policy) and audited. ``--as`` names the operator (``extend``'s ``--by`` is the
amount of time, as in ``extend THREAD --by 2h``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import (
    CliError,
    bind_graph,
    command,
    load_object,
    open_saver,
    url_option,
)

_SPAN = re.compile(r"(\d+(?:\.\d+)?)([dhms])")
_UNIT = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


def parse_span(text: str) -> timedelta:
    """``2h``, ``90m``, ``1h30m``, ``1d``, ``45s``; a leading ``-`` shortens."""
    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    parts = _SPAN.findall(body)
    if not body or "".join(n + u for n, u in parts) != body:
        raise CliError(f"--by {text!r} is not a duration: use e.g. 2h, 90m, 1h30m, 1d, -30m")
    return sign * timedelta(seconds=sum(float(n) * _UNIT[u] for n, u in parts))


def parse_until(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise CliError(f"--until {text!r} is not an ISO 8601 time (2026-12-01T17:00)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _act(
    url: str,
    thread: str,
    spec: str | None,
    resume: bool,
    call: Callable[[Any, dict[str, Any], bool], Any],
) -> tuple[Any, Any]:
    """Run ``call(target, config, resume)`` on THREAD; ``(result, state after)``."""
    from langgraph_durable.interrupts import InterruptsError

    obj = load_object(spec, what="--graph") if spec else None
    resume = resume and obj is not None
    with open_saver(url) as saver:
        graph = bind_graph(obj, saver, spec) if obj is not None and spec else None
        config = {"configurable": {"thread_id": thread}}
        if not saver.get_tuple(config):
            raise CliError(f"unknown thread {thread!r}: no checkpoints stored")
        try:
            result = call(graph if graph is not None else saver, config, resume)
        except InterruptsError as exc:
            raise CliError(str(exc)) from None
        state = graph.get_state(config) if graph is not None and resume else None
    return result, state


def _outcome(what: str, thread: str, state: Any) -> None:
    if state is None:
        click.echo(
            f"{what} on thread {thread}: recorded; the next sweep "
            "(`langgraph-durable worker` or `sweep`) resumes the run"
        )
        return
    waiting = f"; now waiting at {list(state.next)}" if state.next else "; the run completed"
    click.echo(f"{what} on thread {thread}{waiting}")


def _common(fn: Any, *, resumes: bool = True) -> Any:
    if resumes:
        fn = click.option(
            "--resume/--no-resume",
            default=True,
            show_default=True,
            help="With --graph: resume the run here, or only record it.",
        )(fn)
    fn = click.option("--roles", multiple=True, help="Roles of the operator (repeatable).")(fn)
    fn = click.option(
        "--approval-id", default=None, help="Which approval, when the thread has several."
    )(fn)
    fn = click.option(
        "--graph",
        "spec",
        default=None,
        metavar="package.module:graph",
        help="The graph the thread runs: its authorization policy applies and the run "
        "resumes here. Without it the change is recorded and the next sweep resumes.",
    )(fn)
    return fn


def _who(fn: Any, flag: str = "--as") -> Any:
    return click.option(flag, "actor", required=True, help="Who does this (user id).")(fn)


def _kwargs(actor: str, approval_id: str | None, roles: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"by": actor, "approval_id": approval_id}
    if roles:
        out["roles"] = list(roles)
    return out


@command("respond")
@url_option
@click.argument("thread")
@click.option("--text", required=True, help="The answer for the agent.")
@_who
@_common
def respond_cmd(
    url: str,
    thread: str,
    text: str,
    actor: str,
    spec: str | None,
    approval_id: str | None,
    roles: tuple[str, ...],
    resume: bool,
) -> None:
    """Answer THREAD's pending approval with text instead of a yes or no (exactly once)."""
    from langgraph_durable.interrupts import respond

    kw = _kwargs(actor, approval_id, roles)
    _, state = _act(
        url, thread, spec, resume, lambda t, c, r: respond(t, c, text=text, resume=r, **kw)
    )
    _outcome(f"answered as {actor}", thread, state)


@command("extend")
@url_option
@click.argument("thread")
@click.option("--by", "span", default=None, help="How much later: 2h, 90m, 1d (-30m: earlier).")
@click.option("--until", default=None, help="The new deadline, ISO 8601 (UTC if no zone).")
@click.option("--comment", default=None, help="Why, kept with the change.")
@_who
@_common
def extend_cmd(
    url: str,
    thread: str,
    span: str | None,
    until: str | None,
    comment: str | None,
    actor: str,
    spec: str | None,
    approval_id: str | None,
    roles: tuple[str, ...],
    resume: bool,
) -> None:
    """Move THREAD's approval deadline: --by 2h (later), --by -30m (earlier) or --until TIME."""
    from langgraph_durable.interrupts import extend

    if (span is None) == (until is None):
        raise CliError("give exactly one of --by DURATION or --until TIME")
    delta = parse_span(span) if span is not None else None
    when = parse_until(until) if until is not None else None
    kw = _kwargs(actor, approval_id, roles)
    _, state = _act(
        url,
        thread,
        spec,
        resume,
        lambda t, c, r: extend(t, c, delta=delta, until=when, comment=comment, resume=r, **kw),
    )
    _outcome(f"deadline moved by {actor}", thread, state)


@command("reassign")
@url_option
@click.argument("thread")
@click.option("--to", "to", multiple=True, required=True, help="New approver (repeatable).")
@click.option("--comment", default=None, help="Why, kept with the change.")
@_who
@_common
def reassign_cmd(
    url: str,
    thread: str,
    to: tuple[str, ...],
    comment: str | None,
    actor: str,
    spec: str | None,
    approval_id: str | None,
    roles: tuple[str, ...],
    resume: bool,
) -> None:
    """Ask other approvers for THREAD's approval (the deadline stays)."""
    from langgraph_durable.interrupts import reassign

    kw = _kwargs(actor, approval_id, roles)
    _, state = _act(
        url,
        thread,
        spec,
        resume,
        lambda t, c, r: reassign(t, c, to=list(to), comment=comment, resume=r, **kw),
    )
    _outcome(f"reassigned to {', '.join(to)} by {actor}", thread, state)


@command("remind")
@url_option
@click.argument("thread")
@click.option("--comment", default=None, help="A note for the approvers.")
@_who
@_common
def remind_cmd(
    url: str,
    thread: str,
    comment: str | None,
    actor: str,
    spec: str | None,
    approval_id: str | None,
    roles: tuple[str, ...],
    resume: bool,
) -> None:
    """Remind the approvers of THREAD's waiting approval (recorded; the notifier is told)."""
    from langgraph_durable.interrupts import remind

    kw = _kwargs(actor, approval_id, roles)
    event, _ = _act(url, thread, spec, False, lambda t, c, r: remind(t, c, comment=comment, **kw))
    click.echo(f"reminded {', '.join(event.approvers) or 'anyone'} of thread {thread}")


@command("cancel")
@url_option
@click.argument("thread")
@click.option("--comment", default=None, help="Why, kept with the cancellation.")
@_who
@_common
def cancel_cmd(
    url: str,
    thread: str,
    comment: str | None,
    actor: str,
    spec: str | None,
    approval_id: str | None,
    roles: tuple[str, ...],
    resume: bool,
) -> None:
    """Cancel the run waiting at THREAD's approval (a saga's compensations run)."""
    from langgraph_durable.interrupts import cancel

    kw = _kwargs(actor, approval_id, roles)
    _, state = _act(
        url, thread, spec, resume, lambda t, c, r: cancel(t, c, comment=comment, resume=r, **kw)
    )
    _outcome(f"cancelled by {actor}", thread, state)
