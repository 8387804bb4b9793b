"""When a growing value is stored as a delta and when as a snapshot (:class:`DeltaPolicy`).

The policy is what a saver's ``deltas=`` option sets; :mod:`._delta` applies it
on every ``put`` and :mod:`._delta_read` charges reads by it.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph_durable.checkpointers._errors import InvalidConfigError

__all__ = ["DEFAULT_POLICY", "BrokenChainError", "DeltaPolicy", "resolve_policy"]


class BrokenChainError(ValueError):
    """A delta's chain cannot be followed to a snapshot (a row is missing or malformed).

    Backends translate this into :class:`~langgraph_durable.checkpointers.CorruptCheckpointError`
    with the thread, namespace, checkpoint and channel of the read.
    """


@dataclass(frozen=True, slots=True)
class DeltaPolicy:
    """When to store a growing value as a delta and when to write a full snapshot.

    Pass one to a saver as ``deltas=DeltaPolicy(...)`` to tune it; ``deltas=True``
    (the default) uses ``DeltaPolicy()``, ``deltas=False`` stores every value
    whole (:meth:`off`). Values already stored as deltas stay readable whatever
    the policy of the saver that reads them.

    A delta is written while the bytes stored as deltas since the last
    snapshot, this one included, stay within ``ratio`` times the snapshot's
    size. With ``ratio=1`` snapshots at least double in size from one to the
    next, so all snapshots of a chain together weigh less than twice the
    newest value and the deltas hold each item once: storage stays linear.
    A fixed interval (a snapshot every N versions) would not: its snapshots
    alone grow with the square of the length.

    Attributes:
        ratio: Deltas since the last snapshot may weigh up to ``ratio`` times
            the snapshot. Larger saves space and lengthens the chains a read
            walks (up to ``ratio / (1 + ratio)`` of the versions since the
            snapshot).
        row_cost: Bytes a stored row costs beyond its payload (keys, index
            entries); charged to every row so tiny deltas cannot make chains
            arbitrarily long.
        max_depth: Optional cap on the number of deltas between a version and
            its snapshot (bounds a read's walk at the price of more snapshots).
        min_size: Values whose serialized size is below this are always stored
            whole: a delta would save little and add a row to every read.
    """

    ratio: float = 1.0
    row_cost: int = 64
    max_depth: int | None = None
    min_size: int = 256

    def __post_init__(self) -> None:
        checks = (
            ("ratio", self.ratio, isinstance(self.ratio, (int, float)) and self.ratio > 0),
            ("row_cost", self.row_cost, isinstance(self.row_cost, int) and self.row_cost >= 0),
            (
                "max_depth",
                self.max_depth,
                self.max_depth is None or (isinstance(self.max_depth, int) and self.max_depth >= 0),
            ),
            ("min_size", self.min_size, isinstance(self.min_size, int) and self.min_size >= 0),
        )
        for name, value, ok in checks:
            if not ok or isinstance(value, bool):
                raise InvalidConfigError(
                    field=f"deltas.{name}",
                    reason=f"must be a non-negative number (ratio: positive), got {value!r}",
                )

    @classmethod
    def off(cls) -> DeltaPolicy:
        """The policy of ``deltas=False``: every value is stored whole."""
        return cls(max_depth=0)

    @property
    def enabled(self) -> bool:
        """Whether this policy ever writes a delta."""
        return self.max_depth != 0


DEFAULT_POLICY = DeltaPolicy()


def resolve_policy(deltas: bool | DeltaPolicy) -> DeltaPolicy:
    """The policy a saver's ``deltas=`` option means (raises on anything else).

    Args:
        deltas: ``True`` for :class:`DeltaPolicy` defaults, ``False`` to store
            every value whole, or a :class:`DeltaPolicy`.

    Raises:
        InvalidConfigError: ``deltas`` is neither a bool nor a ``DeltaPolicy``.
    """
    if deltas is True:
        return DEFAULT_POLICY
    if deltas is False:
        return DeltaPolicy.off()
    if isinstance(deltas, DeltaPolicy):
        return deltas
    raise InvalidConfigError(
        field="deltas", reason=f"expected True, False or a DeltaPolicy, got {deltas!r}"
    )
