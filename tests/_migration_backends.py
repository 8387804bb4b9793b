"""Open our savers by backend name, so migration tests run the same on Postgres and Redis.

Also runnable as a script, to play "process 1" of the seed story in its own
process: ``python -m tests._migration_backends pause-v1 BACKEND URL AREA THREAD``, and
to run ``upgrade_all`` as a separate worker: ``... upgrade-all BACKEND URL AREA BATCH``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Backend:
    """A backend and the isolated area (PG schema / Redis prefix) of one test."""

    name: str
    url: str
    area: str

    @contextmanager
    def open(self, migrations: Any = None) -> Iterator[Any]:
        """The sync saver on this area, set up."""
        if self.name == "postgres":
            from langgraph_durable.checkpointers.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(
                self.url, schema=self.area, migrations=migrations
            ) as saver:
                saver.setup()
                yield saver
        else:
            from langgraph_durable.checkpointers.redis import RedisSaver

            with RedisSaver.from_conn_string(
                self.url, prefix=self.area, migrations=migrations
            ) as saver:
                saver.setup()
                yield saver

    @asynccontextmanager
    async def aopen(self, migrations: Any = None) -> AsyncIterator[Any]:
        """The async saver on this area, set up."""
        if self.name == "postgres":
            from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

            async with AsyncPostgresSaver.from_conn_string(
                self.url, schema=self.area, migrations=migrations
            ) as saver:
                await saver.setup()
                yield saver
        else:
            from langgraph_durable.checkpointers.redis import AsyncRedisSaver

            async with AsyncRedisSaver.from_conn_string(
                self.url, prefix=self.area, migrations=migrations
            ) as saver:
                await saver.setup()
                yield saver

    def argv(self) -> list[str]:
        return [self.name, self.url, self.area]


def seed_bulk(backend: Backend, threads: int) -> int:
    """Store ``threads`` paused threads of 4 checkpoints each at version 1; return checkpoints."""
    from tests import _bulk_seed

    if backend.name == "postgres":
        return _bulk_seed.seed_postgres(backend.url, backend.area, threads)
    return _bulk_seed.seed_redis(backend.url, backend.area, threads)


def backend_from_fixture(name: str, request: Any) -> Backend:
    if name == "postgres":
        url, schema = request.getfixturevalue("pg_set_up_schema")
        return Backend(name, url, schema)
    url, prefix = request.getfixturevalue("redis_prefix")
    return Backend(name, url, prefix)


def _pause_v1(backend: Backend, thread_id: str, parallel: bool) -> None:
    from tests._seed_graphs import build_v1, v1_migrations

    with backend.open(v1_migrations()) as saver:
        out = build_v1(saver, parallel=parallel).invoke(
            {"price": 10, "log": []}, {"configurable": {"thread_id": thread_id}}
        )
    assert "__interrupt__" in out, out
    print("paused", out["__interrupt__"][0].id)


def _upgrade_all(backend: Backend, all_history: bool, batch_size: int) -> None:
    import json

    from langgraph_durable.migrations import upgrade_all
    from tests._bulk_seed import m

    with backend.open(m) as saver:
        result = upgrade_all(saver, m, all_history=all_history, batch_size=batch_size)
    print(json.dumps({"upgraded": result.upgraded, "failed": result.failed}))


if __name__ == "__main__":
    cmd, name, url, area = sys.argv[1:5]
    backend = Backend(name, url, area)
    if cmd == "pause-v1":
        _pause_v1(backend, sys.argv[5], parallel="--parallel" in sys.argv)
    elif cmd == "upgrade-all":
        _upgrade_all(backend, "--all-history" in sys.argv, int(sys.argv[5]))
    else:
        raise SystemExit(f"unknown command {cmd}")
