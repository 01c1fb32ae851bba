"""Test helpers for the environment server: start it as a real process, talk to it over gRPC.

Test modules import it as `import platform_testing.env_server_client as helpers` (conftest.py puts this folder
on sys.path: pytest runs with --import-mode=importlib).
"""

from __future__ import annotations

import queue
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any, Self

import grpc
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import environment_pb2_grpc as env_grpc

CALL_TIMEOUT_S = 60.0


class ServerProcess:
    """`python -m platform_sdk ARGS` as a child process; `address` is what its READY line said."""

    def __init__(
        self, args: Sequence[str], *, ready_timeout: float = 60.0, listen: str = "127.0.0.1:0"
    ) -> None:
        command = [sys.executable, "-m", "platform_sdk", *args]
        if "--listen" not in args:
            command += ["--listen", listen]
        # stderr goes to a file: a pipe nobody reads could fill up and block the server
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - read after the process exits
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        line = read_line(self.process.stdout, ready_timeout)
        if not line.startswith("READY "):
            self.process.kill()
            self.process.wait(10)
            raise RuntimeError(f"the server did not start: {line!r}\n{self.stderr_text()}")
        self.address = line.split(" ", 1)[1].strip()

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def stop(self, timeout: float = 10.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def read_line(stream: Any, timeout: float) -> str:
    """One line from a pipe, or "" at its end or after `timeout` seconds."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    line: str = stream.readline()
    return line


def run_server(args: Sequence[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run the server to its exit (for start-up failures)."""
    return subprocess.run(
        [sys.executable, "-m", "platform_sdk", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class EnvClient:
    """A lockstep client: one `Connect` stream, one request in flight at a time."""

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(address)
        self._requests: queue.SimpleQueue[env_pb.EnvRequest | None] = queue.SimpleQueue()
        stub = env_grpc.EnvironmentStub(self._channel)
        self._responses: Iterator[env_pb.EnvResponse] = stub.Connect(
            iter(self._requests.get, None), timeout=CALL_TIMEOUT_S * 5
        )
        self._next_id = 100

    def call(self, **command: Any) -> env_pb.EnvResponse:
        self._next_id += 1
        request = env_pb.EnvRequest(id=self._next_id, **command)
        self._requests.put(request)
        response = next(self._responses)
        assert response.id == request.id, (response.id, request.id)
        return response

    def ok(self, **command: Any) -> env_pb.EnvResponse:
        """`call`, asserting that it did not fail."""
        response = self.call(**command)
        assert not response.HasField("error"), response.error
        return response

    def close(self) -> None:
        self._requests.put(None)
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once process `pid` no longer runs (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False
