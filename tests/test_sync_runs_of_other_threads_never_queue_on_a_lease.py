"""A sync saver's runs of different threads never wait for each other's lease writes.

The lease statements ride with a run's first and last write, under a lock that
orders the start and end of the runs of one thread. It is one lock per thread
id (as in the async saver), so threads sharing a saver (``run_once`` with
``concurrency``) do not queue on each other's round trips.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from langgraph_durable.checkpointers.postgres import PostgresSaver
from tests._approval_graphs import review_graph


def test_a_run_proceeds_while_another_threads_lease_write_is_in_flight(pg_schema) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema, pool_size=2) as saver:
        saver.setup()
        graph = review_graph(saver)
        leases = saver.run_leases
        assert leases is not None
        busy = leases._io_lock("a")  # thread a's run is in its first or last write
        with ThreadPoolExecutor(1) as pool:
            busy.acquire()
            try:
                run = pool.submit(graph.invoke, {"amount": 5}, {"configurable": {"thread_id": "b"}})
                out = run.result(timeout=30)  # a saver-wide lock would keep b waiting here
            finally:
                busy.release()
        assert "__interrupt__" in out
