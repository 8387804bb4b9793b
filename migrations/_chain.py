"""The version chain: :class:`StateMigrations` and its steps."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langgraph_durable.migrations._errors import MigrationChainError, MigrationError

StepFn = Callable[[dict[str, Any]], dict[str, Any]]
F = TypeVar("F", bound=StepFn)

# Prefixes of the channels LangGraph manages itself. They are never handed to a
# step: a step sees the graph's state keys only.
_INTERNAL_PREFIXES = ("__", "branch:", "join:", "start:")


def is_state_channel(channel: str) -> bool:
    """Tell whether ``channel`` holds a state key (as opposed to a LangGraph-internal channel).

    Args:
        channel: A channel name as stored in a checkpoint or a pending write.

    Returns:
        ``False`` for ``__start__``, ``__pregel_tasks``, ``__interrupt__``,
        ``branch:to:x``, ``join:a+b:x``...; ``True`` for everything else.
    """
    return not channel.startswith(_INTERNAL_PREFIXES)


@dataclass
class Step:
    """One link of the chain: everything that upgrades ``from_version`` to ``from_version + 1``.

    Attributes:
        from_version: The version this step upgrades from.
        fn: The values function, or ``None`` if the step only renames nodes.
        renames: Node renames ``old -> new`` applied by this step.
        schema: Optional Pydantic model (or any type ``pydantic.TypeAdapter``
            accepts, e.g. a ``TypedDict``) the step's result must validate against.
    """

    from_version: int
    fn: StepFn | None = None
    renames: dict[str, str] = field(default_factory=dict)
    schema: Any = None

    @property
    def name(self) -> str:
        """Human name used in errors: ``"price_to_money (1->2)"``."""
        parts = []
        if self.fn is not None:
            parts.append(getattr(self.fn, "__qualname__", repr(self.fn)))
        if self.renames:
            parts.append(", ".join(f"rename {o}->{n}" for o, n in self.renames.items()))
        label = " + ".join(parts) or "empty"
        return f"{label} ({self.from_version}->{self.from_version + 1})"


class StateMigrations:
    """The schema version a deployment writes, and the steps that bring old checkpoints to it.

    Steps are pure functions on the checkpoint's channel values (the state keys),
    registered per version and chained: with ``version=3`` and steps from 1 and 2,
    a checkpoint stored with version 1 goes through both. The chain is checked by
    :meth:`validate`, which every saver calls when constructed with
    ``migrations=``, so a gap is an error when the app starts.

    Example:
        ```python
        m = StateMigrations(version=2)

        @m.upgrade(from_version=1)
        def price_to_money(values: dict) -> dict:
            values["price"] = {"amount": values["price"], "currency": "USD"}
            return values

        m.rename_node(from_version=1, old="review", new="human_review")
        saver = PostgresSaver.from_conn_string(url, migrations=m)
        ```

    Args:
        version: The schema version this code writes (>= 0).
        state_schema: Optional Pydantic model (or ``TypedDict``, or anything
            ``pydantic.TypeAdapter`` accepts) the fully upgraded values must
            validate against; a failure raises :class:`MigrationError` naming the
            last step and the thread. The values are only checked, never replaced.
    """

    def __init__(self, version: int, *, state_schema: Any = None) -> None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise MigrationChainError(reason=f"version must be an int >= 0, got {version!r}")
        self.version = version
        self.state_schema = state_schema
        self._steps: dict[int, Step] = {}
        self._frozen = False
        self._lock = threading.Lock()
        self._validators: dict[int, Callable[[Any], Any]] = {}
        self._final_validator: Callable[[Any], Any] | None = None
        self._paths: dict[int, list[Step] | None] = {}

    # ---------------------------------------------------------------- registration
    def _step_for(self, from_version: int) -> Step:
        if self._frozen:
            raise MigrationChainError(
                reason="steps must be registered before the first saver uses these migrations"
            )
        if isinstance(from_version, bool) or not isinstance(from_version, int):
            raise MigrationChainError(reason=f"from_version must be an int, got {from_version!r}")
        if not 0 <= from_version < self.version:
            raise MigrationChainError(
                reason=f"from_version={from_version} is outside 0..{self.version - 1} "
                f"(this code writes version {self.version})"
            )
        return self._steps.setdefault(from_version, Step(from_version))

    def upgrade(self, *, from_version: int, schema: Any = None) -> Callable[[F], F]:
        """Register the values function of the step ``from_version -> from_version + 1``.

        The function receives a private copy of the checkpoint's state keys (a
        dict; internal LangGraph channels are not included) and returns the
        upgraded dict. It may mutate and return its argument. State keys that
        were never set are absent from the dict, so a step should not assume
        every key is present (it is not called at all when none is). It should be pure:
        the same input gives the same output, since it also runs on pending
        writes and may run again on every read until the checkpoint is rewritten.

        Args:
            from_version: The version the function upgrades from.
            schema: Optional type the step's result must validate against.

        Returns:
            A decorator that registers the function and returns it unchanged.

        Raises:
            MigrationChainError: ``from_version`` out of range, a function is
                already registered for it, or the chain is frozen.
        """

        def register(fn: F) -> F:
            if not callable(fn):
                raise MigrationChainError(reason=f"upgrade step must be callable, got {fn!r}")
            with self._lock:
                step = self._step_for(from_version)
                if step.fn is not None:
                    raise MigrationChainError(
                        reason=f"two upgrade functions from version {from_version}: "
                        f"{step.fn.__qualname__} and {fn.__qualname__}"
                    )
                step.fn = fn
                step.schema = schema
            return fn

        return register

    def rename_node(self, *, from_version: int, old: str, new: str) -> None:
        """Rename a graph node in the step ``from_version -> from_version + 1``.

        A thread paused at (or scheduled to run) ``old`` resumes at ``new``: the
        node's trigger channels (``branch:to:old``, ``join:...``), its
        ``versions_seen`` entry, pending ``Send`` packets, and the task and
        interrupt ids of its pending writes are rewritten.

        Raises:
            MigrationChainError: bad names, ``old`` renamed twice in the step,
                two nodes renamed to the same name, or the chain is frozen.
        """
        for label, name in (("old", old), ("new", new)):
            if not isinstance(name, str) or not name or name.startswith("__"):
                raise MigrationChainError(reason=f"rename_node {label}={name!r} is not a node name")
            if any(c in name for c in ":|+"):
                raise MigrationChainError(
                    reason=f"rename_node {label}={name!r}: a node name cannot contain ':', '|', '+'"
                )
        if old == new:
            raise MigrationChainError(reason=f"rename_node old and new are both {old!r}")
        with self._lock:
            step = self._step_for(from_version)
            if old in step.renames:
                raise MigrationChainError(
                    reason=f"node {old!r} renamed twice from version {from_version}"
                )
            if new in step.renames.values():
                raise MigrationChainError(
                    reason=f"two nodes renamed to {new!r} from version {from_version}"
                )
            step.renames[old] = new

    # ---------------------------------------------------------------- validation
    @property
    def oldest_supported(self) -> int:
        """The oldest stored version that can be upgraded (``version`` if no steps)."""
        return min(self._steps, default=self.version)

    def validate(self) -> StateMigrations:
        """Check the chain and freeze it; idempotent. Savers call this when constructed.

        The registered steps must be contiguous up to ``version - 1``: from the
        oldest registered ``from_version`` every later version has a step.
        Older stored versions are refused at read time with
        :class:`SchemaVersionError`.

        Returns:
            ``self``, for chaining.

        Raises:
            MigrationChainError: a gap in the chain or an unusable schema.
        """
        if self._frozen:  # the common case, on every upgrade: no lock
            return self
        with self._lock:
            if self._frozen:
                return self
            if self._steps:
                missing = [
                    v for v in range(self.oldest_supported, self.version) if v not in self._steps
                ]
                if missing:
                    raise MigrationChainError(
                        reason=f"no step from version(s) {missing}: steps are registered from "
                        f"{sorted(self._steps)} and this code writes version {self.version}"
                    )
            try:
                for v, step in self._steps.items():
                    if step.schema is not None:
                        self._validators[v] = _make_validator(step.schema)
                if self.state_schema is not None:
                    self._final_validator = _make_validator(self.state_schema)
            except Exception as exc:
                raise MigrationChainError(reason=f"cannot build a validator: {exc}") from exc
            self._frozen = True
        return self

    def steps_from(self, stored_version: int) -> list[Step] | None:
        """The steps that upgrade ``stored_version`` to :attr:`version`, or ``None`` if no path.

        Validates (and freezes) the chain on first use.
        """
        self.validate()
        try:
            return self._paths[stored_version]
        except KeyError:
            pass
        path: list[Step] | None
        if stored_version == self.version:
            path = []
        elif stored_version > self.version or stored_version < self.oldest_supported:
            path = None
        else:
            path = [self._steps[v] for v in range(stored_version, self.version)]
        self._paths[stored_version] = path  # frozen: the path never changes
        return path

    def check_values(self, step: Step, values: Mapping[str, Any], *, final: bool) -> None:
        """Validate a step's result against its schema (and the state schema if ``final``).

        Raises:
            Exception: whatever the validator raises; the caller wraps it.
        """
        validator = self._validators.get(step.from_version)
        if validator is not None:
            validator(dict(values))
        if final and self._final_validator is not None:
            self._final_validator(dict(values))

    def __repr__(self) -> str:
        return f"StateMigrations(version={self.version}, steps={sorted(self._steps)})"


def _make_validator(schema: Any) -> Callable[[Any], Any]:
    # Imported lazily: pydantic is a dependency, but a chain without schemas
    # should not pay for building adapters.
    from pydantic import BaseModel, TypeAdapter

    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate
    return TypeAdapter(schema).validate_python


def step_error(
    step: Step, exc: BaseException, reason: str, where: Mapping[str, Any]
) -> MigrationError:
    """Build the :class:`MigrationError` for ``step`` failing with ``exc``."""
    err = MigrationError(
        step=step.name,
        thread_id=str(where.get("thread_id", "")),
        checkpoint_ns=str(where.get("checkpoint_ns", "")),
        checkpoint_id=where.get("checkpoint_id"),
        from_version=step.from_version,
        to_version=step.from_version + 1,
        reason=reason,
    )
    err.__cause__ = exc
    return err
