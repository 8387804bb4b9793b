"""Commands on one waiting approval beside approve/reject: respond, extend, reassign, remind,
cancel.

Each is authorized by the same policy as a decision (with --graph, the graph's
policy) and audited. ``--as`` names the operator (``extend``'s ``--by`` is the
amount of time, as in ``extend THREAD --by 2h``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from langgraph_durable.interrupts._cli_options import graph_option

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


@dataclass(frozen=True)
class ThreadCall:
    """What a command on one THREAD's waiting approval was given, beside its own options.

    Attributes:
        url: ``--url``.
        thread: ``THREAD``.
        spec: ``--graph`` (``None``: record only, the next sweep resumes).
        by: Who acts (``--as``; ``--by`` of ``approve``/``reject``).
        approval_id: ``--approval-id``.
        roles: ``--roles``.
        resume: ``--resume/--no-resume``.
    """

    url: str
    thread: str
    spec: str | None
    by: str
    approval_id: str | None
    roles: tuple[str, ...]
    resume: bool

    def kwargs(self) -> dict[str, Any]:
        """``by=``, ``approval_id=`` and (when given) ``roles=`` of the library's call."""
        out: dict[str, Any] = {"by": self.by, "approval_id": self.approval_id}
        if self.roles:
            out["roles"] = list(self.roles)
        return out

    def run(
        self, call: Callable[[Any, dict[str, Any], bool], Any], *, resumes: bool = True
    ) -> tuple[Any, Any]:
        """Run ``call(target, config, resume)`` on THREAD; ``(result, state after)``.

        ``target`` is the graph with ``--graph`` (its authorization policy applies,
        resuming or not), else the saver; the run resumes here only with ``--graph``,
        ``--resume`` and ``resumes``.
        """
        from langgraph_durable.interrupts import InterruptsError

        spec = self.spec
        obj = load_object(spec, what="--graph") if spec else None
        resume = resumes and self.resume and obj is not None
        with open_saver(self.url) as saver:
            graph = bind_graph(obj, saver, spec) if obj is not None and spec else None
            config = {"configurable": {"thread_id": self.thread}}
            if not saver.get_tuple(config):
                raise CliError(f"unknown thread {self.thread!r}: no checkpoints stored")
            try:
                result = call(graph if graph is not None else saver, config, resume)
            except InterruptsError as exc:
                raise CliError(str(exc)) from None
            state = graph.get_state(config) if graph is not None and resume else None
        return result, state


def approval_options(*, which: str, roles: str, resume: str) -> tuple[Callable[[Any], Any], ...]:
    """``--approval-id``, ``--roles`` and ``--resume/--no-resume`` with their help texts."""
    return (
        click.option("--approval-id", default=None, help=which),
        click.option("--roles", multiple=True, help=roles),
        click.option("--resume/--no-resume", default=True, show_default=True, help=resume),
    )


def thread_command(
    name: str, options: Sequence[Callable[[Any], Any]], who: str
) -> Callable[[Callable[..., Any]], click.Command]:
    """Declare ``NAME [--url URL] THREAD`` with ``options`` (in the order of its help).

    The command function takes one :class:`ThreadCall` (``who``: the parameter
    of the option naming the user) and, by keyword, its other options.
    """

    def declare(fn: Callable[..., Any]) -> click.Command:
        @functools.wraps(fn)
        def gathered(
            *,
            url: str,
            thread: str,
            spec: str | None,
            approval_id: str | None,
            roles: tuple[str, ...],
            resume: bool,
            **own: Any,
        ) -> Any:
            by = own.pop(who)
            return fn(ThreadCall(url, thread, spec, by, approval_id, roles, resume), **own)

        decorated: Any = gathered
        for option in reversed(options):
            decorated = option(decorated)
        return command(name)(url_option(click.argument("thread")(decorated)))

    return declare


def _outcome(what: str, thread: str, state: Any) -> None:
    if state is None:
        click.echo(
            f"{what} on thread {thread}: recorded; the next sweep "
            "(`langgraph-durable worker` or `sweep`) resumes the run"
        )
        return
    waiting = f"; now waiting at {list(state.next)}" if state.next else "; the run completed"
    click.echo(f"{what} on thread {thread}{waiting}")


# after each command's own options: who, the graph, which approval, roles, resume
_OPERATOR_OPTIONS = (
    click.option("--as", "actor", required=True, help="Who does this (user id)."),
    graph_option(
        "The graph the thread runs: its authorization policy applies and the run "
        "resumes here. Without it the change is recorded and the next sweep resumes."
    ),
    *approval_options(
        which="Which approval, when the thread has several.",
        roles="Roles of the operator (repeatable).",
        resume="With --graph: resume the run here, or only record it.",
    ),
)


def _operator_command(
    name: str, *own: Callable[[Any], Any]
) -> Callable[[Callable[..., Any]], click.Command]:
    return thread_command(name, (*own, *_OPERATOR_OPTIONS), "actor")


@_operator_command(
    "respond", click.option("--text", required=True, help="The answer for the agent.")
)
def respond_cmd(call: ThreadCall, text: str) -> None:
    """Answer THREAD's pending approval with text instead of a yes or no (exactly once)."""
    from langgraph_durable.interrupts import respond

    kw = call.kwargs()
    _, state = call.run(lambda t, c, r: respond(t, c, text=text, resume=r, **kw))
    _outcome(f"answered as {call.by}", call.thread, state)


@_operator_command(
    "extend",
    click.option("--by", "span", default=None, help="How much later: 2h, 90m, 1d (-30m: earlier)."),
    click.option("--until", default=None, help="The new deadline, ISO 8601 (UTC if no zone)."),
    click.option("--comment", default=None, help="Why, kept with the change."),
)
def extend_cmd(call: ThreadCall, span: str | None, until: str | None, comment: str | None) -> None:
    """Move THREAD's approval deadline: --by 2h (later), --by -30m (earlier) or --until TIME."""
    from langgraph_durable.interrupts import extend

    if (span is None) == (until is None):
        raise CliError("give exactly one of --by DURATION or --until TIME")
    delta = parse_span(span) if span is not None else None
    when = parse_until(until) if until is not None else None
    kw = call.kwargs()
    _, state = call.run(
        lambda t, c, r: extend(t, c, delta=delta, until=when, comment=comment, resume=r, **kw)
    )
    _outcome(f"deadline moved by {call.by}", call.thread, state)


@_operator_command(
    "reassign",
    click.option("--to", "to", multiple=True, required=True, help="New approver (repeatable)."),
    click.option("--comment", default=None, help="Why, kept with the change."),
)
def reassign_cmd(call: ThreadCall, to: tuple[str, ...], comment: str | None) -> None:
    """Ask other approvers for THREAD's approval (the deadline stays)."""
    from langgraph_durable.interrupts import reassign

    kw = call.kwargs()
    _, state = call.run(
        lambda t, c, r: reassign(t, c, to=list(to), comment=comment, resume=r, **kw)
    )
    _outcome(f"reassigned to {', '.join(to)} by {call.by}", call.thread, state)


@_operator_command(
    "remind", click.option("--comment", default=None, help="A note for the approvers.")
)
def remind_cmd(call: ThreadCall, comment: str | None) -> None:
    """Remind the approvers of THREAD's waiting approval (recorded; the notifier is told)."""
    from langgraph_durable.interrupts import remind

    kw = call.kwargs()
    event, _ = call.run(lambda t, c, r: remind(t, c, comment=comment, **kw), resumes=False)
    click.echo(f"reminded {', '.join(event.approvers) or 'anyone'} of thread {call.thread}")


@_operator_command(
    "cancel", click.option("--comment", default=None, help="Why, kept with the cancellation.")
)
def cancel_cmd(call: ThreadCall, comment: str | None) -> None:
    """Cancel the run waiting at THREAD's approval (a saga's compensations run)."""
    from langgraph_durable.interrupts import cancel

    kw = call.kwargs()
    _, state = call.run(lambda t, c, r: cancel(t, c, comment=comment, resume=r, **kw))
    _outcome(f"cancelled by {call.by}", call.thread, state)
