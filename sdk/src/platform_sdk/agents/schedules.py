"""Schedules for a value that changes as training goes (an exploration epsilon, a learning rate),
for agents that want them: `schedule.value(t)` at time `t` (steps, episodes or updates: the
caller's unit).

- `ConstantSchedule(v)`.
- `LinearSchedule(start, end, duration)`: from `start` at 0 to `end` at `duration`, then `end`.
- `PiecewiseSchedule([(t0, v0), (t1, v1), ...], outside=None)`: linear between the points; before
  the first and after the last, the nearest end's value (or `outside` when given).
- `ExponentialSchedule(start, end, decay)`: `start * decay**t`, never past `end` (ai_traineree's
  epsilon: `eps_start`, `eps_end`, `eps_decay` per episode).

`schedule_from_text` reads the run command's `--epsilon` forms: `0.1`, `linear:1.0,0.05,500`,
`exp:1.0,0.01,0.995`, `piecewise:0=1.0,100=0.5,500=0.05`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Schedule(Protocol):
    def value(self, t: float) -> float: ...


@dataclass(frozen=True)
class ConstantSchedule:
    constant: float

    def value(self, t: float) -> float:
        return self.constant


@dataclass(frozen=True)
class LinearSchedule:
    start: float
    end: float
    duration: float

    def __post_init__(self) -> None:
        if not self.duration > 0:
            raise ValueError(f"a linear schedule's duration must be above 0, not {self.duration!r}")

    def value(self, t: float) -> float:
        fraction = min(max(t / self.duration, 0.0), 1.0)
        return self.start + fraction * (self.end - self.start)


@dataclass(frozen=True)
class ExponentialSchedule:
    start: float
    end: float
    decay: float

    def __post_init__(self) -> None:
        if not 0 < self.decay <= 1:
            raise ValueError(f"an exponential schedule's decay must be in (0, 1], not {self.decay!r}")

    def value(self, t: float) -> float:
        value = self.start * float(self.decay) ** max(float(t), 0.0)
        return float(max(value, self.end) if self.start >= self.end else min(value, self.end))


class PiecewiseSchedule:
    def __init__(self, points: Sequence[tuple[float, float]], outside: float | None = None) -> None:
        if not points:
            raise ValueError("a piecewise schedule needs at least one (t, value) point")
        times = [float(t) for t, _ in points]
        if any(later <= earlier for earlier, later in zip(times, times[1:], strict=False)):
            raise ValueError(f"a piecewise schedule's times must increase: {times}")
        self.times = times
        self.values = [float(v) for _, v in points]
        self.outside = outside

    def value(self, t: float) -> float:
        if t < self.times[0] or t > self.times[-1]:
            if self.outside is not None:
                return self.outside
            return self.values[0] if t < self.times[0] else self.values[-1]
        right = bisect.bisect_right(self.times, t)
        if right >= len(self.times):
            return self.values[-1]
        left = right - 1
        fraction = (t - self.times[left]) / (self.times[right] - self.times[left])
        return self.values[left] + fraction * (self.values[right] - self.values[left])

    def __repr__(self) -> str:
        return f"PiecewiseSchedule({list(zip(self.times, self.values, strict=True))})"


def schedule_from_text(text: str) -> Schedule:
    """A schedule from its short form (see the module's docstring).

    Raises:
        ValueError: the text says what form it expected.
    """
    kind, _, rest = text.partition(":")
    try:
        if not rest:
            return ConstantSchedule(finite(text))
        numbers = [finite(part) for part in rest.split(",")] if kind in ("linear", "exp") else []
        if kind == "linear" and len(numbers) == 3:
            return LinearSchedule(*numbers)
        if kind == "exp" and len(numbers) == 3:
            return ExponentialSchedule(*numbers)
        if kind == "piecewise":
            pairs = [part.split("=") for part in rest.split(",")]
            if all(len(pair) == 2 for pair in pairs):
                return PiecewiseSchedule([(finite(t), finite(v)) for t, v in pairs])
    except ValueError as exc:
        raise ValueError(f"schedule {text!r}: {exc}") from None
    raise ValueError(f"schedule {text!r}: give a number, linear:START,END,DURATION, exp:START,END,DECAY or "
                     "piecewise:T=V,T=V,...")


def finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value
