"""``setup()`` of the Redis saver: layout steps under a lock, persistence check (no I/O)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Generator
from typing import Any

from langgraph_durable.checkpointers._errors import LayoutVersionError
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, Sleep, script
from langgraph_durable.migrations.redis import steps

logger = logging.getLogger("langgraph_durable.checkpointers.redis")
LOCK_MS = 60_000
_warned: set[str] = set()


def setup(core: RedisCore, *, where: str) -> Generator[Call | Sleep, Any, None]:
    """Bring the prefix's layout to the newest version, then check persistence."""
    all_steps = steps()
    latest = len(all_steps)
    keys = core.keys
    token = secrets.token_hex(16)  # not uuid4, which applications patch (see _leases)
    waited = 0.0
    while True:
        (version, locked) = yield Call(
            [("GET", keys.layout()), ("SET", keys.layout_lock(), token, "NX", "PX", LOCK_MS)]
        )
        found = int(version) if version is not None else 0
        if found > latest:
            if locked:
                yield Call([script(S.UNLOCK, [keys.layout_lock()], token)])
            raise LayoutVersionError(
                found=found, expected=latest, hint="upgrade langgraph-durable to use this prefix"
            )
        if locked:
            break
        if found == latest:
            break  # someone else holds the lock but there is nothing left to do
        if waited > LOCK_MS / 1000:
            raise TimeoutError(f"layout lock {keys.layout_lock()!r} held for over {waited:.0f}s")
        yield Sleep(0.1)
        waited += 0.1
    if locked:
        try:
            for step in all_steps[found:]:
                lua = step.get("thread_script")
                if lua:
                    reply = yield Call([("SMEMBERS", k) for k in keys.registries()])
                    threads = sorted({m.decode() for members in reply for m in members})
                    for thread_id in threads:
                        tkeys = keys.thread(thread_id)
                        yield Call([("EVAL", lua, len(tkeys), *tkeys)])
                yield Call([("SET", keys.layout(), int(step["version"]))])
        finally:
            yield Call([script(S.UNLOCK, [keys.layout_lock()], token)])
    # one call each: a cluster client cannot pipeline a keyless command
    replies = []
    for name in ("appendonly", "save"):
        replies.append((yield Call([("CONFIG", "GET", name)]))[0])
    _check_persistence(replies, where)


def _flat(reply: Any) -> dict[str, str]:
    """CONFIG GET replies: a dict, a flat list, or a per-node dict (cluster)."""
    out: dict[str, str] = {}
    if isinstance(reply, dict):
        for k, v in reply.items():
            if isinstance(v, (dict, list)):
                out.update(_flat(v))
            else:
                out[_s(k)] = _s(v)
    elif isinstance(reply, list):
        for i in range(0, len(reply) - 1, 2):
            out[_s(reply[i])] = _s(reply[i + 1])
    return out


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _check_persistence(replies: list[Any], where: str) -> None:
    if any(isinstance(r, Exception) for r in replies):
        return  # CONFIG disabled or renamed: nothing to say
    conf: dict[str, str] = {}
    for r in replies:
        conf.update(_flat(r))
    if conf.get("appendonly", "yes") == "no" and conf.get("save", "x").strip() == "":
        if where in _warned:
            return
        _warned.add(where)
        logger.warning(
            "Redis at %s persists nothing (appendonly no, no save points): waiting threads "
            "are lost on a restart. Enable AOF (appendonly yes) or RDB snapshots.",
            where,
        )


__all__ = ["Cmd", "setup"]
