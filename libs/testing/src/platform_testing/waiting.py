"""Polling helpers for tests that wait on other processes, and process look-ups."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 30.0, what: str = "condition", every: float = 0.1) -> T:
    """Poll `predicate` until it returns something truthy and return that.

    Raises:
        AssertionError: naming `what`, when `timeout` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def instance_pids(session_id: str) -> list[int]:
    """Pids of the environment server processes of a session (their command line names it)."""
    out = subprocess.run(["pgrep", "-f", f"platform_sdk.*{session_id}"], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]
