"""A real S3 API server for tests: moto's server mode (`python -m moto.server`) as a process on a
free port.

Waits until it answers HTTP instead of sleeping, and raises with the tail of its log when it
exits first. Moto keeps objects in memory: a stop loses them. Tests share one server and
isolate themselves by bucket (the `s3_bucket` fixture gives each test its own name).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

from platform_testing.ports import free_port
from platform_testing.processes import stop_process


class S3ServerError(RuntimeError):
    pass


class S3Server:
    """moto's S3 API on `host`:`port` (any key pair is accepted; region us-east-1); `host` another
    address of this machine's (a bridge's, for servers in network namespaces) or loopback."""

    access_key = "test-access-key"
    secret_key = "test-secret-key"
    region = "us-east-1"

    def __init__(self, port: int | None = None, log_path: str | os.PathLike[str] | None = None,
                 host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port()
        self.log_path = Path(log_path or Path(tempfile.mkdtemp(prefix="s3-server-")) / "moto.log")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """host:port, as PLATFORM_S3_ENDPOINT takes it."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    def env(self, bucket: str, prefix: str = "recordings") -> dict[str, str]:
        """The recorder's PLATFORM_* variables to record into s3://`bucket`/`prefix` here."""
        return {
            "PLATFORM_RECORDINGS": f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}",
            "PLATFORM_S3_ENDPOINT": self.endpoint,
            "PLATFORM_S3_ACCESS_KEY": self.access_key,
            "PLATFORM_S3_SECRET_KEY": self.secret_key,
            "PLATFORM_S3_REGION": self.region,
            "PLATFORM_S3_SECURE": "false",
        }

    def _answers(self) -> bool:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy from the env
        try:
            opener.open(f"{self.url}/moto-api/", timeout=1).close()
        except urllib.error.HTTPError:
            return True  # it answered
        except OSError:
            return False
        return True

    def start(self, timeout: float = 60.0) -> Self:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_"))}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", self.host, "-p", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._answers():
                return self
            if self.process.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                raise S3ServerError(f"moto server exited with {self.process.returncode}: {tail}")
            time.sleep(0.05)
        self.stop()
        raise S3ServerError(f"moto server not answering on {self.url} after {timeout}s; log: {self.log_path}")

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
