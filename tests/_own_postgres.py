"""A PostgreSQL server of the test's own (initdb + pg_ctl), restartable on one port.

Fault tests stop and restart it; the shared server is never touched. As root,
the server runs as the ``postgres`` (else ``nobody``) user, since PostgreSQL
refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from tests._servers import free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path:
        return on_path
    import pgserver  # the `embedded` extra ships the binaries

    return os.path.join(os.path.dirname(pgserver.__file__), "pginstall", "bin", name)


def _run_as() -> tuple[list[str], int | None, int | None]:
    if os.geteuid() != 0:
        return [], None, None
    for user in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            continue
        return ["runuser", "-u", user, "--"], pw.pw_uid, pw.pw_gid
    raise RuntimeError("running as root and no unprivileged user to run PostgreSQL")


@dataclass
class OwnPostgres:
    """``initdb``'d cluster in a temp folder, started with ``pg_ctl`` on a free port.

    It listens on 127.0.0.1 and on a unix socket in ``folder``. With
    ``password``, user postgres has it and every connection must give it
    (scram-sha-256); else every connection is trusted.
    """

    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="lgd-pg-own-"))
    port: int = field(default_factory=free_port)
    password: str | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def data(self) -> str:
        return os.path.join(self.folder, "data")

    def _cmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix, _, _ = _run_as()
        return subprocess.run(
            [*prefix, *args], check=check, capture_output=True, text=True, timeout=120
        )

    def init(self) -> OwnPostgres:
        _, uid, gid = _run_as()
        if uid is not None:
            os.chown(self.folder, uid, gid or -1)
        auth = ["--auth=trust"]
        if self.password is not None:
            pwfile = os.path.join(self.folder, "pw")
            with open(pwfile, "w") as f:
                f.write(self.password + "\n")
            if uid is not None:
                os.chown(pwfile, uid, gid or -1)
            auth = ["--auth=scram-sha-256", f"--pwfile={pwfile}"]
        self._cmd(
            _bin("initdb"), "-D", self.data, "-U", "postgres", *auth, "--no-sync", "-E", "UTF8"
        )
        return self

    def start(self) -> OwnPostgres:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        self._cmd(
            _bin("pg_ctl"),
            "-D",
            self.data,
            "-o",
            options,
            "-l",
            os.path.join(self.folder, "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; ``mode="immediate"`` is a crash (recovery from WAL on start)."""
        self._cmd(_bin("pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
