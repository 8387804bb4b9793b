"""``langgraph-durable serve`` (or ``worker --serve``) as a real process for the tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests._servers import free_port

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "langgraph_durable.interrupts.cli"]
HTTP_TIMEOUT = 60.0
"""Seconds a test's request to the service may take (httpx's own default, 5 s, is short
for a decision that resumes a run on a loaded machine)."""


def start(
    args: list[str], *, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start the command on a free port; returns once ``/healthz`` answers 200."""
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, *args, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read() if proc.stdout else "exited")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the service did not answer within 60 s")


def read_until(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    """Its output up to the first line holding ``text`` (the command keeps running).

    The worker prints a line per pass, so each read returns within a pass.
    """
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"no line with {text!r} in: {''.join(seen)}")


def stop(proc: subprocess.Popen[str]) -> str:
    """Stop it as Ctrl-C would; its output."""
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"did not stop on SIGINT: {out}") from None
    return out


def tokens_file(tmp_path: Path, tokens: dict[str, Any] | None = None) -> Path:
    """A tokens file (alice of ops by default)."""
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(tokens or {"alice-token-0001": {"id": "alice", "roles": ["ops"]}}))
    return path
