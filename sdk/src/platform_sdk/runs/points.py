"""A run's points as the client keeps them until they are sent: checked when logged, queued in
order, taken in batches the API accepts."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, NamedTuple

from platform_contracts.names import METRIC_NAME, METRIC_NAME_RULE

MAX_POINTS_PER_REQUEST = 5000  # what POST /v0/runs/{id}/metrics takes at once


class Point(NamedTuple):
    """One value of one metric at one step (a tuple: `log` makes one per value, so it stays cheap)."""

    name: str
    step: int
    value: float
    time: float
    frames: int | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "step": self.step, "value": self.value, "time": self.time}
        if self.frames is not None:
            body["frames"] = self.frames
        return body


def checked_name(name: str) -> str:
    """`name` when it is a metric name the platform takes.

    Raises:
        ValueError: naming the rule.
    """
    if not isinstance(name, str) or METRIC_NAME.fullmatch(name) is None:
        raise ValueError(f"metric name {name!r}: use {METRIC_NAME_RULE}")
    return name


def checked_count(what: str, value: Any) -> int:
    """A whole number of at least 0 (a step or a frame count).

    Raises:
        ValueError: naming `what`.
    """
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number, not {value!r}") from None
    if number != value or number < 0:
        raise ValueError(f"{what} must be a whole number of at least 0, not {value!r}")
    return number


class PointQueue:
    """The points logged and not yet accepted by the platform, oldest first.

    At most `limit` are kept: past it the oldest are dropped and counted (`dropped`), so a run
    whose platform is away for long keeps its latest points and never runs out of memory.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dropped = 0
        self._points: deque[Point] = deque()
        self._skipped: set[str] = set()
        self._names: set[str] = set()  # names already checked
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._points)

    def add(self, values: Mapping[str, Any], step: int, frames: int | None, at: float | None) -> list[str]:
        """Queue one point per finite value; returns the names whose value was NaN or infinite and
        skipped for the first time (the caller warns once per name)."""
        if type(step) is not int or step < 0:
            step = checked_count("step", step)
        if frames is not None and (type(frames) is not int or frames < 0):
            frames = checked_count("frames", frames)
        now = time.time() if at is None else float(at)
        points = []
        newly_skipped = []
        names = self._names
        for name, value in values.items():
            if name not in names:
                names.add(checked_name(name))
            number = float(value)
            if number - number != 0.0:  # NaN or infinite (math.isfinite, without the call)
                if name not in self._skipped:
                    self._skipped.add(name)
                    newly_skipped.append(name)
                continue
            points.append(Point(name, step, number, now, frames))
        with self._lock:
            self._points.extend(points)
            overflow = len(self._points) - self.limit
            for _ in range(max(overflow, 0)):
                self._points.popleft()
            self.dropped += max(overflow, 0)
        return newly_skipped

    def peek(self, count: int = MAX_POINTS_PER_REQUEST) -> list[Point]:
        """The oldest `count` points, left queued until `accepted`."""
        with self._lock:
            return [self._points[i] for i in range(min(count, len(self._points)))]

    def accepted(self, batch: list[Point]) -> None:
        """Take `batch` (from `peek`) off the queue; points dropped meanwhile are not taken twice."""
        with self._lock:
            for point in batch:
                if self._points and self._points[0] is point:
                    self._points.popleft()
