"""A throwaway 3-master Redis Cluster on loopback ports, for the cluster tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import redis

from tests._servers import free_port, redis_server_binary

SLOTS = 16384


def _cluster_port() -> int:
    # the cluster bus listens on port + 10000, so the port must stay below 55536
    while True:
        port = free_port()
        if port < 55000 and _free(port + 10000):
            return port


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class LocalCluster:
    """Three ``redis-server --cluster-enabled yes`` processes with the slots split."""

    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="lgd-cluster-"))
    ports: list[int] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self, masters: int = 3) -> LocalCluster:
        binary = redis_server_binary()
        for _ in range(masters):
            port = _cluster_port()
            self.ports.append(port)
            self.procs.append(
                subprocess.Popen(
                    [
                        binary,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        f"nodes-{port}.conf",
                        "--dir",
                        self.folder,
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--cluster-node-timeout",
                        "5000",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        clients = [redis.Redis(port=p, host="127.0.0.1") for p in self.ports]
        deadline = time.monotonic() + 20
        for c in clients:
            while True:
                try:
                    c.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        per = SLOTS // masters
        for i, c in enumerate(clients):
            last = SLOTS if i == masters - 1 else (i + 1) * per
            c.execute_command("CLUSTER", "ADDSLOTS", *range(i * per, last))
        for p in self.ports[1:]:
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", p)
        while True:
            states = [c.execute_command("CLUSTER", "INFO") for c in clients]
            if all(b"cluster_state:ok" in s for s in states) and all(
                b"cluster_known_nodes:%d" % masters in s for s in states
            ):
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the test cluster did not reach cluster_state:ok")
            time.sleep(0.1)
        for c in clients:
            c.close()
        return self

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster() -> LocalCluster:
    """Start a cluster; the caller stops it."""
    cluster = LocalCluster()
    try:
        return cluster.start()
    except BaseException:
        cluster.stop()
        raise


__all__ = ["LocalCluster", "start_cluster"]
