"""Run leases and multitask strategies, for the workers and drivers built on the savers.

A saver that keeps run leases (both of ours do) records which process runs which
thread. :mod:`langgraph_durable.interrupts` reads those records to recover the runs
of a process that died and to respect a thread's multitask strategy; this module is
the whole of what it may use, so the lease machinery behind it can change freely.
"""

from langgraph_durable.checkpointers._lease_driver import drive
from langgraph_durable.checkpointers._lease_driver_async import adrive
from langgraph_durable.checkpointers._lease_flows import close_as, close_if_ended, unpark
from langgraph_durable.checkpointers._leases import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_INTERRUPTED,
    PARKED,
    RECOVERED_KEY,
    RECOVERIES_KEY,
    RUNNING,
    LeaseCounts,
    LeaseRecord,
    LeaseSettings,
    LeaseStore,
    clip_error,
)
from langgraph_durable.checkpointers._multitask import REJECT, held_by_a_live_run, run_policy
from langgraph_durable.checkpointers._run_ends import end_shown_by
from langgraph_durable.checkpointers._run_lease_core import LeaseTarget
from langgraph_durable.checkpointers._run_leases import RunLeases
from langgraph_durable.checkpointers._run_leases_async import AsyncRunLeases

__all__ = [
    "ENDED_ERROR",
    "ENDED_FINISHED",
    "ENDED_INTERRUPTED",
    "PARKED",
    "RECOVERED_KEY",
    "RECOVERIES_KEY",
    "REJECT",
    "RUNNING",
    "AsyncRunLeases",
    "LeaseCounts",
    "LeaseRecord",
    "LeaseSettings",
    "LeaseStore",
    "LeaseTarget",
    "RunLeases",
    "adrive",
    "clip_error",
    "close_as",
    "close_if_ended",
    "drive",
    "end_shown_by",
    "held_by_a_live_run",
    "run_policy",
    "unpark",
]
