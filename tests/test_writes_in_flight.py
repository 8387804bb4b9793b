"""The registry a put consults for its step's writes still being stored.

``checkpointers/_writes_in_flight.py``.

The put/write ordering itself is tested on real Postgres in
tests/postgres/test_pg_growing_lists_are_stored_as_deltas.py; here, what the
registry keys on, when a put does not wait, and a forked child's fresh start.
"""

from __future__ import annotations

import os
import threading
import time

from langgraph_durable.checkpointers._leased_writes import _step_key
from langgraph_durable.checkpointers._writes_in_flight import WritesInFlight


def test_the_key_of_a_step() -> None:
    conf = {"thread_id": "t", "checkpoint_id": "c1"}
    assert _step_key({"configurable": conf}) == ("t", "", "c1")
    assert _step_key({"configurable": {**conf, "checkpoint_ns": None}}) == ("t", "", "c1")
    # a put of a durability="sync" run does not wait (its writes still register)
    sync = {"configurable": {**conf, "__pregel_durability": "sync"}}
    assert _step_key(sync, put=True) is None
    assert _step_key(sync) == ("t", "", "c1")
    assert _step_key({"configurable": {**conf, "__pregel_durability": "async"}}, put=True)
    # ids that cannot be keys are left to the saver's own checks
    assert _step_key({"configurable": {**conf, "thread_id": {"a": 1}}}) is None


def test_a_put_waits_until_the_writes_end_or_the_timeout() -> None:
    registry = WritesInFlight(timeout=5.0)
    key = ("t", "", "c1")
    registry.begin(key)
    ended = threading.Timer(0.2, registry.end, (key,))
    start = time.monotonic()  # before the timer starts: the end is 0.2 s after this or later
    ended.start()
    registry.wait(key)
    assert 0.15 < time.monotonic() - start < 4.0
    assert not registry.running(key)
    registry.begin(key)
    short = WritesInFlight(timeout=0.1)
    short.begin(key)
    start = time.monotonic()
    short.wait(key)  # never ends: the put goes on after the timeout
    assert 0.09 < time.monotonic() - start < 2.0


def test_a_forked_child_starts_with_nothing_in_flight() -> None:
    registry = WritesInFlight(timeout=3.0)
    key = ("t", "", "c1")
    registry.begin(key)  # a put_writes of the parent, running in another thread
    pid = os.fork()
    if pid == 0:  # the child: waits for nothing it does not run
        start = time.monotonic()
        registry.wait(key)
        os._exit(0 if time.monotonic() - start < 1.0 and not registry.running(key) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert registry.running(key)
    registry.end(key)
