"""The cross-slot registries of threads, runs and schema versions, and what was sent to them.

A thread's keys share one hash slot; what finds threads across slots (every
thread, the threads of a run, the threads written at a schema version) are
registry sets, each under its own hash tag. A put adds its thread to them;
this remembers what was sent recently, so a put skips registrations the
server already holds, and drops that memory when any saver removed members
(the registry generation moved).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._keys import Keys, shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, script


class Registry:
    """Registrations of one saver's core (no I/O but :meth:`live_threads`'s commands)."""

    def __init__(self, keys: Keys, ttl_ms: int, schema_version: int) -> None:
        self.keys = keys
        self.ttl_ms = ttl_ms
        self.schema_version = schema_version
        # registrations already sent (key, member) -> monotonic time to resend,
        # valid while the registry generation stays the one last read
        self._registered: dict[tuple[str, str], float] = {}
        self._generation: bytes | None = None

    def forget(self, key: str, member: str) -> None:
        """Send ``member``'s registration in ``key`` again next time (it was removed)."""
        self._registered.pop((key, member), None)

    def forget_key(self, key: str) -> None:
        """Send every registration in ``key`` again next time (the set was deleted)."""
        self._registered = {k: v for k, v in self._registered.items() if k[0] != key}

    def add(self, key: str, member: str, *, expire: bool = True) -> list[Cmd]:
        """SADD to a cross-slot registry, skipped while recently sent.

        With a TTL the run and version sets expire too (twice the TTL) and are
        sent again every half TTL, so a thread that stays in use stays
        findable. The thread registry never expires: readers drop entries of
        threads that are gone.
        """
        now = time.monotonic()
        if self._registered.get((key, member), 0.0) > now:
            return []
        if len(self._registered) > 50_000:
            self._registered.clear()
        ttl = self.ttl_ms / 1000
        self._registered[(key, member)] = now + (ttl / 2 if ttl else 3600.0)
        cmds: list[Cmd] = [("SADD", key, member)]
        if self.ttl_ms and expire:
            cmds.append(("PEXPIRE", key, 2 * self.ttl_ms))
        return cmds

    def changed(self, generation: bytes | None) -> bool:
        """Whether registries lost members since the last put read the generation.

        If so, the skip cache is dropped: what this saver registered may have
        been removed by another saver or process.
        """
        generation = generation or b"0"  # no counter yet: nothing was removed
        if generation == self._generation:
            return False
        self._generation = generation
        self._registered.clear()
        return True

    def for_put(self, thread_id: str, run_id: Any) -> list[Cmd]:
        cmds = self.thread(thread_id)
        if isinstance(run_id, str) and run_id:
            cmds += self.add(self.keys.run(run_id), thread_id)
        return cmds + self.add(self.keys.version(self.schema_version), thread_id)

    def thread(self, thread_id: str) -> list[Cmd]:
        """Registry entry of a thread, with its expiry hint when the saver has a TTL.

        The hint is when the thread's keys may have expired at the latest if
        nothing else is written: registration is re-sent every half TTL, so
        1.5 TTLs cover the writes in between. ``GT``: concurrent writers keep
        the latest hint. A thread kept longer (a wait's deadline, a read
        refresh) is checked by the reader, which then moves its hint on.
        """
        shard = shard_of(thread_id)
        cmds = self.add(self.keys.registry(shard), thread_id, expire=False)
        if cmds and self.ttl_ms:
            hint = int(time.time() * 1000) + self.ttl_ms * 3 // 2
            cmds.append(("ZADD", self.keys.registry_expiry(shard), "GT", hint, thread_id))
        return cmds

    def live_threads(self) -> Generator[Call, Any, list[str]]:
        """Registered thread ids, dropping (for good) those whose keys expired.

        Only threads whose expiry hint has passed are checked (one ``PTTL``
        each); no keyspace scan. A thread written again meanwhile has a newer
        hint and stays (the drop is a compare-and-set in the shard's slot).
        """
        reply = yield Call([("SMEMBERS", k) for k in self.keys.registries()])
        shards = [sorted(m.decode() for m in members) for members in reply]
        asked = [(i, ms) for i, ms in enumerate(shards) if ms]
        if not asked:
            return []
        now = int(time.time() * 1000)
        hints = yield Call([("ZMSCORE", self.keys.registry_expiry(i), *ms) for i, ms in asked])
        due = [
            (i, t)
            for (i, ms), scores in zip(asked, hints, strict=True)
            for t, score in zip(ms, scores, strict=True)
            if score is not None and float(score) <= now
        ]
        gone: set[str] = set()
        if due:
            ttls = yield Call([("PTTL", self.keys.thread(t)[0]) for _, t in due])
            cmds: list[Cmd] = []
            dead: dict[int, list[str]] = {}
            for (i, t), pttl in zip(due, ttls, strict=True):
                if int(pttl) == -2:
                    dead.setdefault(i, []).append(t)
                elif int(pttl) == -1:  # no TTL any more (a saver without one wrote it)
                    cmds.append(("ZREM", self.keys.registry_expiry(i), t))
                else:
                    cmds.append(("ZADD", self.keys.registry_expiry(i), "GT", now + int(pttl), t))
            if dead:
                cmds.append(("INCR", self.keys.registry_generation()))
            cmds += [
                script(
                    S.UNREGISTER, [self.keys.registry(i), self.keys.registry_expiry(i)], now, *ts
                )
                for i, ts in dead.items()
            ]
            replies = yield Call(cmds)
            for dropped in replies[len(replies) - len(dead) :]:
                gone.update(m.decode() for m in dropped)
        return [t for ms in shards for t in ms if t not in gone]
