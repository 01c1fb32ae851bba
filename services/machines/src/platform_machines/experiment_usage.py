"""GPU-hours of experiments per UTC day, team and machine, for `/v0/usage` beside the broker's
instance-hours.

An experiment counts its GPUs from `started_at` (the command started; a queued or cloning one
counts nothing yet) to `ended_at`, or now while it runs, split at UTC midnights. `gpus: 0`
counts nothing. An experiment that shares its GPUs counts them all the same (GPU-hours are what
it held, not a share of the GPUs' time).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable

from simulusion.machines.v1 import machines_pb2 as pb

from platform_machines.errors import InvalidExperimentError
from platform_machines.experiment_store import StoredExperiment

HOUR_S = 3600.0
UTC = dt.timezone.utc


def parse_day(text: str, field: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else _bad(text, field)
    except ValueError:
        return _bad(text, field)


def _bad(text: str, field: str) -> dt.date:
    raise InvalidExperimentError(f"{field} must be a date YYYY-MM-DD (UTC), not {text!r}", field=field)


def day_start(day: dt.date) -> float:
    return dt.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def gpu_usage_rows(experiments: Iterable[StoredExperiment], since: float, until: float,
                   now: float) -> list[pb.GpuUsageRow]:
    """GPU-hours within [since, until) per day, team and machine; by day, team, machine id."""
    hours: dict[tuple[str, str, str], float] = defaultdict(float)
    counted: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    names: dict[str, str] = {}
    for x in experiments:
        if not x.gpus or not x.started_at:
            continue
        start, end = max(x.started_at, since), min(x.ended_at or now, until)
        if end <= start:
            continue
        names[x.machine_id] = x.machine_name
        for day, seconds in _split_at_midnights(start, end):
            key = (day.isoformat(), x.team, x.machine_id)
            hours[key] += seconds * x.gpus / HOUR_S
            counted[key].add(x.id)
    return [pb.GpuUsageRow(day=day, team=team, machine_id=machine_id, machine_name=names[machine_id],
                           gpu_hours=hours[(day, team, machine_id)], experiments=len(counted[(day, team, machine_id)]))
            for day, team, machine_id in sorted(hours)]


def _split_at_midnights(start: float, end: float) -> list[tuple[dt.date, float]]:
    parts = []
    day = dt.datetime.fromtimestamp(start, UTC).date()
    while True:
        next_midnight = day_start(day + dt.timedelta(days=1))
        seconds = min(end, next_midnight) - max(start, day_start(day))
        if seconds > 0:
            parts.append((day, seconds))
        if end <= next_midnight:
            return parts
        day += dt.timedelta(days=1)
