"""What every feature store of a Postgres saver holds: the saver's runner and core.

A store (waits, decisions, audit, leases, activities, outbox, migrations) is
a small object the saver keeps as an attribute (``saver.decisions``, ...).
It runs its operations through the runner the saver uses and encodes values
with the saver's core; it holds nothing else of the saver.
"""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers.postgres._core import PostgresCore


class PostgresStore:
    """The base of the feature stores.

    Args:
        runner: The saver's runner (sync or async), shared by the saver and
            every store: one connection or pool, one lock, one event loop.
        core: The saver's core: the statements of its schema and its value codec.
    """

    def __init__(self, runner: Any, core: PostgresCore) -> None:
        self._runner = runner
        self._core = core
        self._q = core.queries

    def _encode_value(
        self, value: Any, channel: str | None = None, extends: Any = None
    ) -> tuple[str, bytes]:
        return self._core._encode_value(value, channel, extends)

    def _decode_value(
        self,
        type_: str,
        blob: bytes | None,
        *,
        where: tuple[str, str, str],
        channel: str,
        rebuilt: bool = False,
    ) -> Any:
        return self._core._decode_value(type_, blob, where=where, channel=channel, rebuilt=rebuilt)
