"""Starting again a service that exited unasked: a growing delay, and giving up on a crash loop.

A child that exits without being asked to (a crash, a ``kill -9``) is started again after
``first_delay`` seconds, doubled for each further crash within ``window`` seconds (at most
``max_delay``); the ``max_crashes``-th crash within the window stops the platform instead
(`CrashLoop`). Each decision is said through a callback, with the exit status and the last
lines, so the terminal shows why a service came back.

The restarts are made by whoever polls `ServiceRestarts.watch` (the launcher's main thread),
so a restarted child gets the same parent-death signal as the first one.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from platform_local.errors import CrashLoop
from platform_local.supervisor import ChildProcess

RESTART_TAIL_LINES = 5
"""Lines of a crashed service's output shown when it is started again (the log has all)."""


@dataclass(frozen=True)
class RestartPolicy:
    """When to start a crashed service again, and when to give up.

    Attributes:
        max_crashes: this many crashes of one service within `window` stop the platform.
        window: seconds over which crashes are counted.
        first_delay: seconds before the first restart; doubled for each further crash.
        max_delay: the longest delay before a restart.
    """

    max_crashes: int = 5
    window: float = 60.0
    first_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, crashes: int) -> float:
        """Seconds to wait before starting a service again after its `crashes`-th recent crash."""
        return min(self.max_delay, self.first_delay * 2.0 ** (crashes - 1))


class ServiceRestarts:
    """Watches children and starts again those that exit unasked, per a `RestartPolicy`.

    Args:
        policy: the delays and the crash-loop limit.
        start: starts one service again by name (with its settings and ports as before).
        say: where each restart and its reason is told (one message, possibly several lines).
        clock: seconds, monotonic (tests may pass their own).
    """

    def __init__(self, policy: RestartPolicy, start: Callable[[str], object], say: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._start = start
        self._say = say
        self._clock = clock
        self._crashes: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self._due: dict[str, float] = {}  # service -> when to start it again
        self.restarts: collections.Counter[str] = collections.Counter()

    def pending(self) -> dict[str, float]:
        """The services waiting to be started again, with the seconds left."""
        now = self._clock()
        return {name: max(0.0, due - now) for name, due in self._due.items()}

    def watch(self, children: Iterable[ChildProcess]) -> None:
        """One pass: schedules a restart for each child found exited unasked, then starts those
        whose delay has passed.

        Raises:
            CrashLoop: a child crashed `max_crashes` times within the window.
        """
        now = self._clock()
        for child in children:
            if child.name in self._due:
                if now >= self._due[child.name]:
                    del self._due[child.name]
                    self.restarts[child.name] += 1
                    self._start(child.name)
                continue
            if child.process is None or child.expected_exit or child.returncode is None:
                continue
            self._crashed(child, now)

    def _crashed(self, child: ChildProcess, now: float) -> None:
        exited = child.exited()
        crashes = self._crashes[child.name]
        crashes.append(now)
        while crashes and now - crashes[0] > self.policy.window:
            crashes.popleft()
        if len(crashes) >= self.policy.max_crashes:
            raise CrashLoop(exited, len(crashes), self.policy.window)
        delay = self.policy.delay(len(crashes))
        self._due[child.name] = now + delay
        lines = [f"{exited}; starting it again in {delay:g} s (crash {len(crashes)} within "
                 f"{self.policy.window:g} s; crash {self.policy.max_crashes} stops the platform)"]
        tail = exited.tail[-RESTART_TAIL_LINES:]
        if tail:
            lines.append("  its last lines:")
            lines += [f"    {line}" for line in tail]
        self._say("\n".join(lines))


__all__ = ["RESTART_TAIL_LINES", "RestartPolicy", "ServiceRestarts"]
