"""Process-table helpers (Linux /proc, with a portable fallback), to check that nothing is left."""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    return text.rsplit(")", 1)[1].split()


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists and is not a zombie."""
    if (_PROC / "self" / "stat").exists():
        fields = _stat_fields(pid)
        return fields is not None and fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot), to tell it from a later one with the
    same pid; None when it is gone or there is no /proc."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None else None


def same_process_alive(pid: int, started: int | None) -> bool:
    """Whether `pid` is alive and is still the process that started at `started`."""
    return pid_alive(pid) and (started is None or start_time(pid) == started)


def descendants(pid: int) -> list[int]:
    """The pids of every live descendant of `pid` (children, grandchildren...); [] without /proc."""
    parents: dict[int, int] = {}
    if not _PROC.is_dir():
        return []
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) and fields[0] not in ("Z", "X"):
            parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found.extend(children)
        frontier.extend(children)
    return found
