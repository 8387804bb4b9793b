"""More concurrent calls than the client has connections wait for one, they do not fail.

redis-py's asyncio pool raises "Too many connections" as soon as 100 calls
are in flight; the client ``AsyncRedisSaver.from_conn_string`` opens queues
the extra calls instead (200 concurrent graph runs on one saver hit this).
"""

from __future__ import annotations

import asyncio

from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.redis import AsyncRedisSaver


async def test_three_hundred_concurrent_puts_all_succeed(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()

        async def put(i: int) -> str:
            cp = empty_checkpoint()
            cp["channel_values"] = {"blob": [b"x" * 20_000]}
            cp["channel_versions"] = {"blob": 1}
            config = {"configurable": {"thread_id": f"t{i}", "checkpoint_ns": ""}}
            out = await saver.aput(config, cp, {"i": i}, {"blob": 1})
            return str(out["configurable"]["checkpoint_id"])

        ids = await asyncio.gather(*(put(i) for i in range(300)))
        assert len(set(ids)) == 300
        got = await asyncio.gather(
            *(
                saver.aget_tuple({"configurable": {"thread_id": f"t{i}", "checkpoint_ns": ""}})
                for i in range(300)
            )
        )
        assert all(t is not None and t.metadata["i"] == i for i, t in enumerate(got))
