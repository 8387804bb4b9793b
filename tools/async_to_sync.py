"""Generate the sync modules from their async sources: ``<name>_async.py`` -> ``<name>.py``.

The async code is the single source of every algorithm that runs both ways;
its sync sibling is produced by this script, committed, and checked by CI::

    python tools/async_to_sync.py            # regenerate every sync module
    python tools/async_to_sync.py --check    # exit 1 naming the stale ones
    python tools/async_to_sync.py FILE...    # only these sources

What changes between the two, token by token (strings and comments follow the
same renames, so docstrings name the sync functions):

* ``async def`` / ``async with`` / ``async for`` lose ``async``; ``await`` goes.
* Identifiers are renamed by :data:`NAMES`, by :data:`DOTTED` (``asyncio.sleep``
  -> ``time.sleep``), and by two rules: ``AsyncX`` -> ``X`` (a capitalised name:
  ``AsyncConnection``, ``AsyncPostgresRunner``) and ``x_async`` -> ``x`` (a
  source module imported by another source).
* In the examples of a docstring (lines that start with ``>>>`` or ``...``),
  ``async`` before ``with``/``for``/``def`` and ``await`` go as they do in code.
* Two markers for the few places that truly differ, kept rare:
  a line ending in ``# async-only`` is left out of the sync module (with its
  block, when the line opens one); a comment line ``# sync-only: <code>`` becomes
  ``<code>`` there (at the comment's indentation).

The result then gets what every module gets: imports sorted and unused ones
dropped, ``for x in xs: yield x`` written ``yield from xs`` (``ruff check --fix
--select I001,F401,UP028``), and ``ruff format``.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("checkpointers", "interrupts", "migrations")
SUFFIX = "_async.py"
HEADER = (
    "# Generated from {source} by tools/async_to_sync.py:\n"
    "# edit the source, then run the script.\n"
)
ASYNC_ONLY = "# async-only"
SYNC_ONLY = "# sync-only:"

NAMES: dict[str, str] = {
    # Python
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "aclose": "close",
    "aiter": "iter",
    "anext": "next",
    "asynccontextmanager": "contextmanager",
    "AbstractAsyncContextManager": "AbstractContextManager",
    "StopAsyncIteration": "StopIteration",
    # LangGraph's checkpoint saver API
    "aget_tuple": "get_tuple",
    "alist": "list",
    "aput": "put",
    "aput_writes": "put_writes",
    "adelete_thread": "delete_thread",
    "adelete_for_runs": "delete_for_runs",
    "acopy_thread": "copy_thread",
    "aprune": "prune",
    "aget_delta_channel_history": "get_delta_channel_history",
    "aget_state": "get_state",
    "aget_state_history": "get_state_history",
    "ainvoke": "invoke",
    # migrations: the bulk runner and its store protocol
    "aupgrade_all": "upgrade_all",
    "amigration_counts": "migration_counts",
    "amigration_sample": "migration_sample",
    "amigration_upgrade_batch": "migration_upgrade_batch",
    "amigration_status": "migration_status",
    # checkpointers: the lease flows' driver and the targets it calls
    "adrive": "drive",
    "adrive_together": "drive_together",
    "aperform": "perform",
    "aacquire_lease": "acquire_lease",
    "aget_lease": "get_lease",
    "atake_over_lease": "take_over_lease",
    "arelease_lease": "release_lease",
    "aunpark_lease": "unpark_lease",
    "arun_with_lease": "run_with_lease",
    "aattempt": "attempt",
    "apause": "pause",
    "arelease_ended": "release_ended",
    # interrupts: the recovery pass and the lease store calls it makes
    "arecover_orphans": "recover_orphans",
    "_awaits_at_breakpoint": "_waits_at_breakpoint",
    "_aresume": "_resume",
    "afind_expired_leases": "find_expired_leases",
    "apark_lease": "park_lease",
    "aclaim_expired_lease": "claim_expired_lease",
    # interrupts: a thread's state, and unparking a thread
    "aread_thread_state": "read_thread_state",
    "_aread_state": "_read_state",
    "_apending_waits": "_pending_waits",
    "aunpark_thread": "unpark_thread",
    # interrupts: the sweeper's loop
    "asweep_forever": "sweep_forever",
    # interrupts: the compensation node's attempt loop
    "aundo_step": "undo_step",
    "_aattempts": "_attempts",
    "anode_audit": "node_audit",
    "asleep": "sleep",
    # interrupts: a thread's pending interrupts read from the saver
    "asaver_state": "saver_state",
    "asaver_history": "saver_history",
    # interrupts: the notification dispatcher and the outbox protocol it calls
    "arun_once": "run_once",
    "alist_waits": "list_waits",
    "aadd_notifications": "add_notifications",
    "aclaim_notifications": "claim_notifications",
    "asettle_notification": "settle_notification",
    "anotification_counts": "notification_counts",
    "arelease_notification": "release_notification",
    "apurge_notifications": "purge_notifications",
    "aretry_parked_notifications": "retry_parked_notifications",
    "_aannounce_expiring": "_announce_expiring",
    "_adeliver": "_deliver",
    "_alink": "_link",
    "adecision_link": "decision_link",
    # checkpointers.redis: the feature stores (names their protocols give them)
    "areconcile_waits": "reconcile_waits",
    "aclaim_due_waits": "claim_due_waits",
    "arelease_wait_claim": "release_wait_claim",
    "await_counts": "wait_counts",
    "arecord_decision": "record_decision",
    "arecord_decisions": "record_decisions",
    "aget_decisions": "get_decisions",
    "acount_decisions": "count_decisions",
    "aappend_audit": "append_audit",
    "aread_audit": "read_audit",
    "apurge_audit": "purge_audit",
    "averify_audit": "verify_audit",
    "aget_activity": "get_activity",
    "aput_activity": "put_activity",
    "arenew_leases": "renew_leases",
    "arecord_lease_error": "record_lease_error",
    "alist_leases": "list_leases",
    "alease_counts": "lease_counts",
    "adelete_lease": "delete_lease",
    "_adelete_thread": "_delete_thread",
    # checkpointers.postgres: retention
    "aapply_retention": "apply_retention",
    # checkpointers: the migration.upgrade span of a migration store (the Postgres stores)
    "async_traced_migrations": "sync_traced_migrations",
    # checkpointers: the savers, their run-lease decorators and what they call
    "async_run_leases": "sync_run_leases",
    "arun_leases": "run_leases",
    "push_async_exit": "push",
    "await_settled": "wait",
    "async_traced_saver": "sync_traced_saver",
    "async_pool": "sync_pool",
    "aconnect": "connect",
    "aschema_version": "schema_version",
    # interrupts: the public decision and operator calls
    "aapprove": "approve",
    "areject": "reject",
    "adecide": "decide",
    "apending_approvals": "pending_approvals",
    "aapproval_health": "approval_health",
    "arequest_approval": "request_approval",
    "arequest_batch_approval": "request_batch_approval",
    "areview_tool_call": "review_tool_call",
    "aedit": "edit",
    "arespond": "respond",
    "aextend": "extend",
    "areassign": "reassign",
    "acancel": "cancel",
    "aremind": "remind",
    # interrupts: the saver a flow's async requests go to (Env)
    "abackend": "backend",
    # interrupts: the store backend (decisions, claims, the wait index, the audit trail)
    "_ascan": "_scan",
    "aaudit_log": "audit_log",
}
"""Identifier -> its sync name (applied in code, strings and comments)."""

DOTTED: dict[str, str] = {
    "asyncio.sleep": "time.sleep",
    "asyncio.Lock": "threading.Lock",
    "asyncio.Event": "threading.Event",
    "redis.asyncio": "redis",
}
"""Dotted names -> their sync spelling (applied in code, strings and comments)."""

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_DOTTED = re.compile(r"\b(" + "|".join(re.escape(k) for k in DOTTED) + r")\b")
_CAPITALISED = re.compile(r"Async([A-Z]\w*)")
_KEYWORDS_AFTER_ASYNC = frozenset({"def", "with", "for"})
_EXAMPLE_ASYNC = re.compile(r"\basync (?=(?:def|with|for)\b)|\bawait ")


class GenerationError(Exception):
    """A source cannot be turned into its sync module (the message says where and why)."""


def sync_name(name: str) -> str:
    """The sync spelling of one identifier."""
    if name in NAMES:
        return NAMES[name]
    found = _CAPITALISED.fullmatch(name)
    if found:
        return found.group(1)
    if name.endswith("_async") and len(name) > len("_async"):
        return name[: -len("_async")]
    return name


def _in_text(text: str) -> str:
    """Renames inside a string or comment."""
    text = _DOTTED.sub(lambda m: DOTTED[m.group(1)], text)
    return _WORD.sub(lambda m: sync_name(m.group(0)), text)


def _in_examples(text: str) -> str:
    """Doctest lines of a string without ``async``/``await``, as the code around them."""
    if ">>>" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith((">>> ", "... ")):
            lines[i] = _EXAMPLE_ASYNC.sub("", line)
    return "\n".join(lines)


def apply_markers(source: str, where: str) -> str:
    """Drop ``# async-only`` lines (and blocks) and uncomment ``# sync-only:`` lines."""
    out: list[str] = []
    skip_deeper_than: int | None = None
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_deeper_than is not None:
            if not stripped or indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        if stripped.startswith(SYNC_ONLY):
            code = stripped[len(SYNC_ONLY) :].strip()
            if not code:
                raise GenerationError(f"{where}:{number}: '{SYNC_ONLY}' names no code")
            out.append(line[:indent] + code + "\n")
        elif line.rstrip().endswith(ASYNC_ONLY):
            code = line.rstrip()[: -len(ASYNC_ONLY)].rstrip()
            if code.endswith(":"):
                skip_deeper_than = indent
        else:
            out.append(line)
    return "".join(out)


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def unasync(source: str, where: str) -> str:
    """The sync text of ``source`` (markers applied, tokens renamed), before formatting."""
    source = apply_markers(source, where)
    starts = _offsets(source)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError) as exc:
        raise GenerationError(f"{where}: cannot tokenize: {exc}") from exc

    def at(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order
    needed: set[str] = set()  # modules the code's dotted renames name
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.type == tokenize.NAME and tok.string in ("async", "await"):
            if tok.string == "async" and (
                following is None or following.string not in _KEYWORDS_AFTER_ASYNC
            ):
                raise GenerationError(f"{where}:{tok.start[0]}: 'async' before {following!r}")
            end = at(following.start) if following is not None else at(tok.end)
            edits.append((at(tok.start), end, ""))
        elif tok.type == tokenize.NAME:
            span = _dotted_span(tokens, i)
            if span is not None:
                last, replacement = span
                edits.append((at(tok.start), at(tokens[last].end), replacement))
                needed.add(replacement.split(".")[0])
                i = last
            elif sync_name(tok.string) != tok.string:
                edits.append((at(tok.start), at(tok.end), sync_name(tok.string)))
        elif tok.type in (tokenize.STRING, tokenize.COMMENT) or tok.type == getattr(
            tokenize, "FSTRING_MIDDLE", -1
        ):
            renamed = _in_text(tok.string)
            if tok.type == tokenize.STRING:
                renamed = _in_examples(renamed)
            if renamed != tok.string:
                edits.append((at(tok.start), at(tok.end), renamed))
        i += 1
    for start, end, replacement in reversed(edits):
        source = source[:start] + replacement + source[end:]
    return _with_imports(source, needed)


def _with_imports(source: str, modules: set[str]) -> str:
    """``source`` importing ``modules`` too (a dotted rename can name a new one).

    Added before the first import; ``ruff check --fix`` then sorts them in.
    """
    lines = source.splitlines(keepends=True)
    missing = sorted(m for m in modules if f"import {m}\n" not in lines)
    if not missing:
        return source
    first = next(
        (i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), len(lines)
    )
    if lines[first : first + 1] == ["from __future__ import annotations\n"]:
        first += 1
    return "".join(lines[:first] + [f"import {m}\n" for m in missing] + lines[first:])


def _dotted_span(tokens: list[tokenize.TokenInfo], i: int) -> tuple[int, str] | None:
    """``(index of the last token, replacement)`` if a :data:`DOTTED` name starts at ``i``."""
    for dotted, replacement in DOTTED.items():
        parts = dotted.split(".")
        j = i
        for k, part in enumerate(parts):
            if k:
                if j + 1 >= len(tokens) or tokens[j + 1].string != ".":
                    break
                j += 2
            if j >= len(tokens) or tokens[j].type != tokenize.NAME or tokens[j].string != part:
                break
        else:
            return j, replacement
    return None


def _ruff(args: list[str], text: str, target: Path) -> str:
    command = [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(target), "-"]
    done = subprocess.run(command, input=text, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise GenerationError(f"{target}: ruff {args[0]} failed:\n{done.stderr}{done.stdout}")
    return done.stdout


def generate(source_path: Path) -> tuple[Path, str]:
    """``(target path, generated text)`` for one async source."""
    target = source_path.with_name(source_path.name[: -len(SUFFIX)] + ".py")
    relative = source_path.relative_to(ROOT).as_posix()
    text = HEADER.format(source=relative) + unasync(source_path.read_text(), relative)
    # ``async for x in xs: yield x`` comes out as a loop that ``yield from`` says better
    tidy = [
        "check",
        "--fix",
        "--unsafe-fixes",
        "--select",
        "I001,F401,UP028",
        "--exit-zero",
        "--quiet",
    ]
    text = _ruff(tidy, text, target)
    return target, _ruff(["format", "--quiet"], text, target)


def sources(names: list[str]) -> list[Path]:
    """The async sources: those named, or every ``*_async.py`` of the packages."""
    if names:
        paths = [Path(n).resolve() for n in names]
        for path in paths:
            if not path.name.endswith(SUFFIX) or not path.is_file():
                raise GenerationError(f"{path}: not an async source (*{SUFFIX})")
        return paths
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*" + SUFFIX)):
            if len(path.name) > len(SUFFIX):  # a module named only "_async.py" is no source
                found.append(path)
    return found


def orphans(generated: set[Path]) -> list[Path]:
    """Generated modules whose source is gone."""
    lost = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path not in generated and path.read_text().startswith("# Generated from "):
                lost.append(path)
    return lost


def main(argv: list[str] | None = None) -> int:
    """Regenerate (or with ``--check`` verify) the sync modules; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("files", nargs="*", help="async sources (default: all)")
    args = parser.parse_args(argv)
    try:
        stale: list[str] = []
        targets: set[Path] = set()
        for source in sources(args.files):
            target, text = generate(source)
            targets.add(target)
            if target.exists() and target.read_text() == text:
                continue
            stale.append(target.relative_to(ROOT).as_posix())
            if not args.check:
                target.write_text(text)
        lost = [] if args.files else orphans(targets)
    except GenerationError as exc:
        print(f"async_to_sync: {exc}", file=sys.stderr)
        return 2
    for path in lost:
        print(f"async_to_sync: {path.relative_to(ROOT)} was generated from a source that is gone")
    if args.check and stale:
        for name in stale:
            print(f"async_to_sync: {name} is stale (run python tools/async_to_sync.py)")
    elif stale:
        print("async_to_sync: wrote " + ", ".join(stale))
    return 1 if lost or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
