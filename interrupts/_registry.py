"""The undo registry: undo functions are stored by name, never pickled.

A compensable node records the *name* of its undo in the checkpointed saga
log; the compensation node looks the function up here when it runs, possibly
in another process days later. The name defaults to the function's qualified
name (``module.qualname``), so the process that resumes a thread must import
the module that defines the undo (it does: it imports the graph). Pass an
explicit ``name=`` to :func:`langgraph_durable.interrupts.compensable` or :func:`register_undo`
to keep the stored name stable when code moves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()
_undos: dict[str, Callable[..., Any]] = {}


def default_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of ``fn``: the name an undo is stored under by default."""
    module = getattr(fn, "__module__", None) or "<unknown>"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if qualname is None:
        raise TypeError(f"cannot derive a name for {fn!r}: pass name=")
    if "<lambda>" in qualname or "<locals>" in qualname:
        # such names are neither unique nor importable in the resuming process
        raise ValueError(
            f"undo {module}.{qualname} is a lambda or a local function: pass an explicit name="
        )
    return f"{module}.{qualname}"


def register_undo(fn: Callable[..., Any], *, name: str | None = None) -> str:
    """Register ``fn`` as an undo under ``name`` (default: its qualified name).

    Registering the same function twice is harmless; registering a different
    function under a taken name raises, unless it has the same module and
    qualified name (a module reloaded in a notebook replaces its old version).

    Returns:
        The name the undo is stored under.

    Raises:
        ValueError: the name is taken by a different function, or the default
            name cannot be derived (lambda, local function).
    """
    key = name or default_name(fn)
    with _lock:
        old = _undos.get(key)
        if old is not None and old is not fn:
            same_code = getattr(old, "__module__", None) == getattr(
                fn, "__module__", None
            ) and getattr(old, "__qualname__", None) == getattr(fn, "__qualname__", None)
            if not same_code:
                raise ValueError(f"undo name {key!r} is already registered to {old!r}")
        _undos[key] = fn
    return key


def lookup_undo(name: str) -> Callable[..., Any]:
    """The undo registered under ``name``.

    Raises:
        LookupError: nothing is registered under that name (the module that
            defines it was not imported by this process).
    """
    with _lock:
        fn = _undos.get(name)
    if fn is None:
        raise LookupError(
            f"no undo registered under {name!r}: import the module that defines it "
            "(or register it with langgraph_durable.interrupts.register_undo) before resuming"
        )
    return fn
