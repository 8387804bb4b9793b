"""langgraph-durable: LangGraph agents that survive interruption.

The names most people need, in one place::

    from langgraph_durable import PostgresSaver, request_approval, approve

Everything else lives in the three packages:

* :mod:`langgraph_durable.checkpointers`: the savers for PostgreSQL
  (:mod:`~langgraph_durable.checkpointers.postgres`) and Redis
  (:mod:`~langgraph_durable.checkpointers.redis`), each sync and async;
* :mod:`langgraph_durable.migrations`: schema-version tagging, ``StateMigrations``,
  ``upgrade_all``;
* :mod:`langgraph_durable.interrupts`: approvals, batches, compensation, activities,
  the sweeper, run recovery and the command line.

The savers are loaded on first use, so ``import langgraph_durable`` imports
neither psycopg nor redis.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langgraph_durable.checkpointers import (
    CheckpointerError,
    CorruptCheckpointError,
    InvalidConfigError,
    StorageRefusedError,
    StorageUnavailableError,
    ThreadBusy,
    configure_telemetry,
)
from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    Decision,
    Escalate,
    InterruptsError,
    InvalidInput,
    LinkRefused,
    NotAuthorized,
    RecoveryWorker,
    activity,
    add_compensation,
    approve,
    compensable,
    decide,
    decision_link,
    pending_approvals,
    reject,
    request_approval,
    request_batch_approval,
)
from langgraph_durable.migrations import MigrationsError, StateMigrations, upgrade_all

if TYPE_CHECKING:
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver

# name -> module that defines it; imported on first access (PEP 562)
_LAZY = {
    "PostgresSaver": "langgraph_durable.checkpointers.postgres",
    "AsyncPostgresSaver": "langgraph_durable.checkpointers.postgres",
    "RedisSaver": "langgraph_durable.checkpointers.redis",
    "AsyncRedisSaver": "langgraph_durable.checkpointers.redis",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_durable' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AlreadyDecided",
    "ApprovalSweeper",
    "AsyncPostgresSaver",
    "AsyncRedisSaver",
    "CheckpointerError",
    "CorruptCheckpointError",
    "Decision",
    "Escalate",
    "InterruptsError",
    "InvalidConfigError",
    "InvalidInput",
    "LinkRefused",
    "MigrationsError",
    "NotAuthorized",
    "PostgresSaver",
    "RecoveryWorker",
    "RedisSaver",
    "StateMigrations",
    "StorageRefusedError",
    "StorageUnavailableError",
    "ThreadBusy",
    "activity",
    "add_compensation",
    "approve",
    "compensable",
    "configure_telemetry",
    "decide",
    "decision_link",
    "pending_approvals",
    "reject",
    "request_approval",
    "request_batch_approval",
    "upgrade_all",
]
