"""A PgBouncer of the test's own, in transaction mode, in front of the test PostgreSQL.

Started from Debian's ``pgbouncer`` package (``.ci/run`` installs it) on a free
port, with its own config and auth file in a temp folder. As root it runs as
the ``postgres`` (else ``nobody``) user, since PgBouncer refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from psycopg.conninfo import conninfo_to_dict

from tests._servers import free_port

MISSING = (
    "pgbouncer is not installed: `apt-get install pgbouncer` (Debian's package; "
    ".ci/run installs it). The PgBouncer tests need the real server and skip nothing."
)


def pgbouncer_binary() -> str:
    """Path of the ``pgbouncer`` binary; fails the test saying how to get it."""
    found = shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.path.exists(p)), None
    )
    if found is None:
        raise RuntimeError(MISSING)
    return found


def _unprivileged() -> str | None:
    if os.geteuid() != 0:
        return None
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return user
    raise RuntimeError("running as root and no unprivileged user to run pgbouncer")


@dataclass
class OwnPgBouncer:
    """One pgbouncer process pooling every database of ``server_url``'s server.

    Attributes:
        server_url: The PostgreSQL server behind it.
        pool_size: Server connections per database and user: fewer than the
            clients, so transactions of different clients share them.
        pool_mode: ``transaction`` (the mode that breaks session state).
    """

    server_url: str
    pool_size: int = 4
    pool_mode: str = "transaction"
    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="lgd-pgbouncer-"))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    def url_for(self, url: str) -> str:
        """``url`` (a database of the server) reached through this pgbouncer instead."""
        parts = urlsplit(url)
        user = conninfo_to_dict(url).get("user") or "postgres"
        # a host in the query (an embedded server's socket folder) would win over the netloc
        query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "hostaddr", "port")]
        return urlunsplit(
            parts._replace(netloc=f"{user}@127.0.0.1:{self.port}", query=urlencode(query))
        )

    def _config(self) -> str:
        server = conninfo_to_dict(self.server_url)
        target = f"host={server.get('host') or '127.0.0.1'} port={server.get('port') or 5432}"
        if server.get("password"):
            target += f" password={server['password']}"
        user = server.get("user") or "postgres"
        with open(os.path.join(self.folder, "userlist.txt"), "w") as f:
            f.write(f'"{user}" ""\n')
        return "\n".join(
            [
                "[databases]",
                f"* = {target}",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {self.port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {self.folder}/userlist.txt",
                f"pool_mode = {self.pool_mode}",
                f"default_pool_size = {self.pool_size}",
                "max_client_conn = 1000",
                "admin_users = postgres",
                f"logfile = {self.folder}/pgbouncer.log",
                "log_connections = 0",
                "log_disconnections = 0",
                f"pidfile = {self.folder}/pgbouncer.pid",
                "",
            ]
        )

    def start(self, timeout: float = 30.0) -> OwnPgBouncer:
        """Start the process and wait until it accepts connections."""
        binary = pgbouncer_binary()
        ini = os.path.join(self.folder, "pgbouncer.ini")
        with open(ini, "w") as f:
            f.write(self._config())
        user = _unprivileged()
        host = conninfo_to_dict(self.server_url).get("host") or ""
        if user is not None and host.startswith("/"):
            # a server on a unix socket (the embedded one) keeps its folder to its own
            # user: pgbouncer runs as that user to reach the socket
            user = pwd.getpwuid(os.stat(host).st_uid).pw_name
        args = [binary, ini] if user is None else [binary, "-u", user, ini]
        if user is not None:
            pw = pwd.getpwnam(user)
            for path in (
                self.folder,
                *(os.path.join(self.folder, n) for n in os.listdir(self.folder)),
            ):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        # not a pipe: nothing would read it, and a full pipe blocks pgbouncer
        # (it also logs to stderr); its log file has what it says
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"pgbouncer did not listen on {self.port}: {self.log()}")

    def log(self) -> str:
        """The end of its log, for error messages."""
        path = os.path.join(self.folder, "pgbouncer.log")
        if not os.path.exists(path):
            return ""
        with open(path) as f:
            return f.read()[-3000:]

    def stop(self) -> None:
        """Stop the process and remove its folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
