"""The records of the run book: a held lease, a decision around a saver call, a heartbeat's plan.

See :mod:`langgraph_durable.checkpointers._run_book`, which makes and reads them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class Held:
    """A lease this process holds, and what the book knows of its run."""

    thread_id: str
    token: int
    runtime: Any  # the run's Runtime; None until the first write of an adopted run
    last_activity: float = field(default_factory=time.monotonic)
    progress: tuple[datetime, str | None] | None = None
    error: str | None = None
    ending: bool = False  # an __error__ was written: the run is probably ending
    pending: bool = False  # decided to start, lease not acquired yet
    # contested: another owner held a live lease when the run started; its
    # (token, renewed_at). The run goes on unleased; the heartbeat takes the
    # lease over once that holder is provably dead, or it is released.
    rival: tuple[int, datetime | None] | None = None
    # the contested run ended cleanly with this reason: release the rival's
    # lease for it once the rival is provably dead (a killed run's lease must
    # not outlive the run that finished the thread)
    closing: str | None = None
    # taken by a run with a multitask strategy (see _multitask.py): kept until
    # the run is over, and released by watch() as soon as it is
    admitted: bool = False
    # such a run paused: the reason to release with once it has returned
    end_reason: str | None = None

    @property
    def ours(self) -> bool:
        """Whether the lease is (being) held by this process, not by a rival."""
        return self.rival is None


@dataclass(frozen=True)
class Decision:
    """What to do around one saver call.

    Attributes:
        start: Acquire the lease before the write (a new run of the thread).
        end: Release after the write, with this reason.
        error: An error text to record (the run wrote ``__error__``).
    """

    thread_id: str | None = None
    runtime: Any = None
    start: bool = False
    end: str | None = None
    error: str | None = None


NOTHING = Decision()


@dataclass(frozen=True)
class Plan:
    """One heartbeat's work.

    Attributes:
        renew: Threads whose lease to renew.
        progress: Progress to record with the renewal.
        ended: ``(thread_id, reason, error)`` of runs found over: release them.
        collect: Run the cycle collector first (a run may be held by a traceback).
        contest: Contested runs still going: try to take their lease.
        clear: ``(thread_id, rival token, reason)`` of contested runs that ended
            cleanly: release the rival's lease once the rival is dead.
    """

    renew: list[str]
    progress: dict[str, tuple[datetime, str | None]]
    ended: list[tuple[str, str, str | None]]
    collect: bool = False
    contest: list[str] = field(default_factory=list)
    clear: list[tuple[str, int, str]] = field(default_factory=list)
