# Generated from interrupts/_sweeper_loop_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The sweeper's loop, written once: a pass every ``interval`` seconds until stopped.

The sync module (:mod:`._sweeper_loop`) is generated from this one by
``tools/async_to_sync.py``; ``ApprovalSweeper.run_forever`` runs it and
``ApprovalSweeper.arun_forever`` runs this one.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph_durable.interrupts._sweeper import ApprovalSweeper

log = logging.getLogger("langgraph_durable.interrupts.sweeper")


def sweep_forever(sweeper: ApprovalSweeper, interval: float, max_runs: int | None) -> None:
    """Call ``sweeper.run_once()`` every ``interval`` seconds until ``sweeper.stop()``.

    A pass that fails is logged and the loop goes on; ``max_runs`` passes at most.
    """
    runs = 0
    while not sweeper._stop.is_set() and (max_runs is None or runs < max_runs):
        started = time.monotonic()
        try:
            sweeper.run_once()
        except Exception:
            log.exception("sweep failed; retrying in %ss", interval)
        runs += 1
        pause = max(0.0, interval - (time.monotonic() - started))
        # stop() from another thread ends the sync pause at once
        sweeper._stop.wait(pause)
