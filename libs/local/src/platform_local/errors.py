"""Errors of the local launcher: one base class, subclasses with the fields a caller needs."""

from __future__ import annotations

import signal


class LocalPlatformError(Exception):
    """Base class of every error the launcher raises."""


class ConfigError(LocalPlatformError):
    """A bad setting, a busy port or a missing package: nothing was started."""


class ServiceExited(LocalPlatformError):
    """A child process exited when nobody asked it to.

    Attributes:
        name: the service (``nats``, ``broker``, ``envhost``, ``recorder``, ``gateway``).
        returncode: its exit status (negative: killed by that signal).
        tail: the last lines of its output.
    """

    def __init__(self, name: str, returncode: int, tail: list[str]) -> None:
        self.name = name
        self.returncode = returncode
        self.tail = tail
        if returncode < 0:
            try:
                how = f"was killed by {signal.Signals(-returncode).name}"
            except ValueError:
                how = f"was killed by signal {-returncode}"
        else:
            how = f"exited with status {returncode}"
        super().__init__(f"{name} {how}")

    def report(self) -> str:
        """The message plus the last lines of the service's output, ready to print."""
        lines = [f"{self} - last lines of its output:"] + [f"  {line}" for line in self.tail]
        return "\n".join(lines if self.tail else [f"{self} (it printed nothing)"])


class CrashLoop(ServiceExited):
    """A service kept crashing (too many times within a window): the platform is stopped.

    Attributes:
        crashes: how many times it crashed within the window.
        window: the window, in seconds.
    """

    def __init__(self, last: ServiceExited, crashes: int, window: float) -> None:
        super().__init__(last.name, last.returncode, last.tail)
        self.crashes = crashes
        self.window = window

    def report(self) -> str:
        return (f"{self.name} crashed {self.crashes} times within {self.window:g} s: stopping the platform. "
                f"Its last exit: {super().report()}")


class StartTimeout(LocalPlatformError):
    """A process did not become ready in time."""
