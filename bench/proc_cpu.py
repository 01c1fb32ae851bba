"""CPU time of whole process trees from /proc, so a benchmark charges each system for every
process it runs (a platform's services and environment instances, a peer's server, a client).

`/proc/<pid>/stat` utime + stime (all threads of the process) in clock ticks (usually 10 ms),
summed over a set of root pids and every live descendant. A process that starts during a
measured window counts from zero; one that exits during it is lost (its parent's cutime would
carry it only once reaped, with its whole life's CPU, so cutime is not used).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

CLOCK_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (field 3, state, is index 0)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process (all its threads); None when it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICK_S


def _children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def process_tree(roots: Iterable[int]) -> set[int]:
    """The roots and all their live descendants."""
    children = _children_by_parent()
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo.extend(children.get(pid, ()))
    return seen


def sample_tree(roots: Iterable[int]) -> dict[int, float]:
    """CPU seconds of every live process of the trees under `roots`, by pid."""
    sample: dict[int, float] = {}
    for pid in process_tree(roots):
        seconds = cpu_seconds(pid)
        if seconds is not None:
            sample[pid] = seconds
    return sample


def cpu_used(before: Mapping[int, float], after: Mapping[int, float]) -> float:
    """CPU seconds spent between two samples by the processes alive at the second one."""
    return sum(max(0.0, seconds - before.get(pid, 0.0)) for pid, seconds in after.items())
