"""A redis-server process of the test's own, on a free loopback port."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import redis

from tests._servers import free_port, redis_server_binary


@dataclass
class OwnRedis:
    """``redis-server`` with the given extra arguments; restartable on the same port and dir.

    With ``password``, the server requires it (``requirepass``); the readiness
    check logs in with it.
    """

    args: list[str] = field(default_factory=list)
    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="lgd-redis-own-"))
    port: int = field(default_factory=free_port)
    binary: str = field(default_factory=redis_server_binary)
    proc: subprocess.Popen[bytes] | None = None
    password: str | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> OwnRedis:
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                self.folder,
                *(["--requirepass", self.password] if self.password is not None else []),
                *self.args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.BusyLoadingError:
                time.sleep(0.05)
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.05)
        client.close()
        return self

    def stop(self) -> None:
        """Graceful stop (SIGTERM: Redis flushes its AOF and exits)."""
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
