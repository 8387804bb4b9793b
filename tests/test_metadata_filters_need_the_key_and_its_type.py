"""A metadata filter matches only checkpoints that hold the key, with a value of the same kind.

``{"k": None}`` must not match metadata without ``k`` (found by the fuzzed-filter test on
Redis: a key the index cannot hold, a lone surrogate, fell back to a Python match that read a
missing key as None), and ``True`` is not ``1`` (as in PostgreSQL's jsonb), in a thread's list
and across threads, whether or not the index answers the filter.
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver


def _store(saver: Any) -> str:
    thread = f"t-{uuid.uuid4().hex}"
    cp = empty_checkpoint()
    saver.put(
        {"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
        cp,
        {"user": "bob", "step": 1},
        {},
    )
    return thread


def _check(saver: Any) -> None:
    thread = _store(saver)
    mine: Any = {"configurable": {"thread_id": thread}}
    for flt in (
        {"absent": None},
        {"\ud800": None},
        {"step": True},
        {"user": "bob", "absent": None},
    ):
        assert list(saver.list(mine, filter=flt)) == [], flt
        assert [
            t
            for t in saver.list(None, filter=flt)
            if t.config["configurable"]["thread_id"] == thread
        ] == [], flt
    for flt in ({"step": 1}, {"user": "bob"}, {"user": "bob", "step": 1}):
        assert len(list(saver.list(mine, filter=flt))) == 1, flt


def test_redis_filters_need_the_key_and_its_type(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        _check(saver)


def test_postgres_filters_need_the_key_and_its_type(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        _check(saver)
