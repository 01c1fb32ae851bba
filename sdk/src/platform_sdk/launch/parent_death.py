"""A child that dies with the process that started it (Linux: the kernel's parent-death signal).

The launcher does not set the signal between fork and exec (a `preexec_fn`): Python run in a
child forked by uvloop, the env host's event loop, can hang there, since uvloop runs the
interpreter's at-fork hooks in it (uvloop#749; the env host's uvloop test hung twice in CI).
Instead the launcher names itself in `PLATFORM_DIE_WITH_PARENT` (`die_with_parent_env`), and
the environment server asks the kernel first thing at its start (`die_with_parent_if_asked`);
a parent that died in between is noticed then, and the child ends at once.

`die_with_parent` stays for children that are not ours to change (the `docker` CLI): the
`preexec_fn` way.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable, MutableMapping

DIE_WITH_PARENT_VARIABLE = "PLATFORM_DIE_WITH_PARENT"
_PR_SET_PDEATHSIG = 1


def die_with_parent_env(parent_pid: int | None = None) -> dict[str, str]:
    """The environment entry asking a child to die with `parent_pid` (default: this process)."""
    return {DIE_WITH_PARENT_VARIABLE: str(os.getpid() if parent_pid is None else parent_pid)}


def die_with_parent_if_asked(environ: MutableMapping[str, str] = os.environ) -> None:
    """Have the kernel SIGKILL this process when the parent named in the environment dies; end
    now if it already has. The variable is removed: this process's own children are not asked."""
    value = environ.pop(DIE_WITH_PARENT_VARIABLE, "")
    if not value or not sys.platform.startswith("linux"):
        return
    try:
        parent_pid = int(value)
    except ValueError:
        return
    _set_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the signal was set
        os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None

    def preexec() -> None:
        _set_parent_death_signal()
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def _set_parent_death_signal() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
