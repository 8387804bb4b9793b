"""The runner of a Redis saver and its stores: executes the I/O-free operations.

An operation (:mod:`._ops`) yields command batches; the runner sends each as
one pipeline (one round trip) on the saver's client, or on its direct lane
(:mod:`._wire`) when every command can take it, resends a batch that met a
dropped connection (every command the core sends is idempotent), retries a
script the server does not know with ``EVAL``, and translates driver errors
into the library's (:func:`._base.translate`). The saver and each of its
feature stores hold the same runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

import redis.asyncio
import redis.asyncio.cluster
from redis import exceptions as rx

from langgraph_durable.checkpointers._errors import CheckpointerError
from langgraph_durable.checkpointers.redis._base import (
    REFUSED_CONNECTING,
    RETRIES,
    TOLERATED,
    UNAVAILABLE,
    as_eval,
    check_replies,
    translate,
)
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, Emit, ListOp, Op, Sleep
from langgraph_durable.checkpointers.redis._wire import DIRECT, AsyncLane, direct_pool

T = TypeVar("T")


def _running_loop() -> asyncio.AbstractEventLoop | None:  # async-only
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class AsyncRedisRunner:
    """Runs operations on one ``redis.asyncio`` client (plain or cluster).

    Args:
        client: The saver's client.
        saver_name: The saver's class name, for the message of a misuse.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster,
        saver_name: str,
    ) -> None:
        self.client = client
        self.saver_name = saver_name
        # plain (non-cluster) clients that pool their connections take the direct path
        pool = direct_pool(client, redis.asyncio.Redis)
        self.lane = AsyncLane(pool) if pool is not None else None
        self.loop = _running_loop()  # async-only

    async def execute(self, cmds: list[Cmd]) -> list[Any]:
        """Send ``cmds`` in one round trip; their replies, resent after a dropped connection."""
        for attempt in range(RETRIES):
            try:
                return await self._execute_once(cmds)
            except UNAVAILABLE as exc:
                # a refused password is an answer: sending again would not change it
                if attempt == RETRIES - 1 or isinstance(exc, REFUSED_CONNECTING):
                    raise
                await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    async def _execute_once(self, cmds: list[Cmd]) -> list[Any]:
        execute: Any = self.client.execute_command  # untyped in redis-py's sync client
        if self.lane is not None and all(c[0] in DIRECT for c in cmds):
            replies = await self.lane.execute(cmds)
            for i in check_replies(cmds, replies):
                replies[i] = await execute(*as_eval(cmds[i]))
            return replies
        if len(cmds) == 1:
            try:
                return [await execute(*cmds[0])]
            except rx.NoScriptError:
                return [await execute(*as_eval(cmds[0]))]
            except (rx.ResponseError, rx.RedisClusterException) as exc:
                if cmds[0][0] in TOLERATED:
                    return [exc]
                raise
        pipe = self.client.pipeline(transaction=False)
        for cmd in cmds:
            pipe.execute_command(*cmd)
        replies = list(await pipe.execute(raise_on_error=False))
        for i in check_replies(cmds, replies):
            replies[i] = await execute(*as_eval(cmds[i]))
        return replies

    async def run(self, operation: str, op: Op[T]) -> T:
        """Drive ``op`` to its result; a driver error comes out as ours, naming ``operation``."""
        reply: Any = None
        failed: Exception | None = None
        try:
            while True:
                try:
                    # a command's error goes into the operation, so that its
                    # ``finally`` can still send what it must (setup's unlock)
                    step = op.send(reply) if failed is None else op.throw(failed)
                except StopIteration as stop:
                    result: T = stop.value  # what the operation returned
                    return result
                failed = None
                if isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    reply = None
                else:
                    try:
                        reply = await self.execute(step.cmds)
                    except Exception as exc:
                        failed, reply = exc, None
        except Exception as exc:
            raise translate(exc, operation) from exc

    async def iterate(self, operation: str, op: ListOp) -> AsyncIterator[Any]:
        """The items ``op`` emits, its commands sent page by page."""
        reply: Any = None
        while True:
            try:
                step = op.send(reply)
            except StopIteration:
                return
            except Exception as exc:
                raise translate(exc, operation) from exc
            if isinstance(step, Emit):
                reply = None
                yield step.value
            else:
                assert isinstance(step, Call)
                try:
                    reply = await self.execute(step.cmds)
                except Exception as exc:
                    raise translate(exc, operation) from exc

    def blocking(self, coro: Coroutine[Any, Any, T]) -> T:  # async-only
        """Run ``coro`` on the saver's loop from another thread and wait for its result."""
        if self.loop is None:
            coro.close()
            raise CheckpointerError(
                f"{self.saver_name}'s sync methods need the saver to be created inside a "
                "running event loop; use RedisSaver for sync code"
            )
        try:
            if asyncio.get_running_loop() is self.loop:
                coro.close()
                raise asyncio.InvalidStateError(
                    f"Synchronous calls to {self.saver_name} are only allowed from a different "
                    "thread. From the main thread, use the async interface."
                )
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()
