"""Stopping the server processes the test fixtures start."""

from __future__ import annotations

import signal
import subprocess


def stop_process(process: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Send `sig` to a running `process` and wait for it; kill it after `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
