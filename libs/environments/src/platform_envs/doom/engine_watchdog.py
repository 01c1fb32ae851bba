"""The engines of this process's games die with it, however it dies.

ViZDoom runs each game's engine as a child process, which `DoomGame.close()` stops and which
otherwise lives on: an environment server killed without running its exit handlers (SIGKILL,
a crash, an unhandled SIGTERM) would leave its games running, each holding a core's share and
~100 MB. A watchdog process, started once per process in a session of its own with its stdin a
pipe from here, is told each engine's pid (`watch`) and each normal close (`forget`). When this
process dies the pipe closes, and the watchdog kills the engines still listed, checking first
that each pid is still a ViZDoom engine (a pid can be reused).

Linux only (it finds the engine by its command line under /proc); elsewhere it does nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

# What the watchdog runs: "+pid" watches, "-pid" forgets; at end of input, kill what is left.
WATCHDOG = """
import os, signal, sys
pids = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        pids.add(int(line[1:]))
    elif line[:1] == "-":
        pids.discard(int(line[1:]))
for pid in pids:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"vizdoom" in f.read():
                os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_watchdog: subprocess.Popen[str] | None = None


def engine_pid(marker: str) -> int | None:
    """The pid of this process's child whose command line holds `marker` (the game's own .ini
    path), or None (not found, or no /proc)."""
    me = str(os.getpid())
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            if fields[1] != me:  # the parent's pid, after the state
                continue
            if marker.encode() in (status.parent / "cmdline").read_bytes():
                return int(status.parent.name)
        except (OSError, IndexError, ValueError):
            continue
    return None


def watch(pid: int) -> None:
    """Kill `pid` when this process dies, unless `forget(pid)` came first."""
    _send(f"+{pid}")


def forget(pid: int) -> None:
    """`pid` was stopped normally: the watchdog leaves it alone."""
    _send(f"-{pid}")


def _send(line: str) -> None:
    global _watchdog
    with _lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG], stdin=subprocess.PIPE, text=True,
                                         start_new_session=True, stdout=subprocess.DEVNULL)
        assert _watchdog.stdin is not None
        _watchdog.stdin.write(line + "\n")
        _watchdog.stdin.flush()
