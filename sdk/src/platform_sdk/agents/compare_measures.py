"""The measures of one agent's run in a comparison: success, recovery, retention, compute.

`measure(trace, window, world_changes)` turns what the comparison kept of one agent's run
(`AgentTrace`) into a JSON-able dict; docs/compare-measures.md says how each number is made.

Steps are session steps: the agent's i-th reward belongs to step `first_step + i`, and the
timeline's `at` counts the same steps. The changes are grouped by `at`; only groups strictly
inside the agent's run (first_step < at < first_step + len(rewards)) are measured, the others
(at or before first_step) make the world the agent starts in. The world a group leaves is
`platform_contracts.world_changes.world_state` of the entries so far.

Pure: numpy and the standard library, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from platform_contracts.world_changes import WorldChange, parse_timeline, world_state

__all__ = ["RECOVERY_TOLERANCE", "AgentTrace", "measure"]

RECOVERY_TOLERANCE = 0.1  # recovered: a window's mean reward >= before - 0.1 x |before|


@dataclass(frozen=True)
class AgentTrace:
    """What a comparison keeps of one agent's run.

    Attributes:
        first_step: the session step of the agent's first step (the warmup's length).
        rewards: one reward per step, in order.
        step_success: info["is_success"] per step; None where the step did not report it.
        episode_success: one per finished episode: is_success of its last step (None: not reported).
        compute_s: seconds spent in act, one per decision.
        work: the agent's own work measures by name (settle_steps, wait_steps), one value per
            decision that reported it.
    """

    first_step: int
    rewards: Sequence[float]
    step_success: Sequence[bool | None] = ()
    episode_success: Sequence[bool | None] = ()
    compute_s: Sequence[float] = ()
    work: Mapping[str, Sequence[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Group:
    at: int
    entries: list[dict[str, Any]]
    changes: list[WorldChange]


class _Rewards:
    """Mean reward over session steps [start, end) of one run."""

    def __init__(self, first_step: int, rewards: Sequence[float]) -> None:
        values = np.asarray(rewards, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError("rewards must be a flat sequence of numbers, one per step")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(f"rewards[{int(bad[0])}] is {values[bad[0]]}: every reward must be a finite number")
        self.first_step = first_step
        self.values = values
        self.end = first_step + len(values)

    def mean(self, start: int, end: int) -> float:
        part = self.values[start - self.first_step:end - self.first_step]
        if part.size != end - start or part.size == 0:
            raise ValueError(f"steps [{start}, {end}) are not all in the run [{self.first_step}, {self.end})")
        return float(np.mean(part))


def measure(trace: AgentTrace, window: int, world_changes: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """The measures of one agent's run (JSON-able).

    Args:
        trace: the run.
        window: the steps rewards are averaged over (the comparison's --window), >= 1.
        world_changes: the session's timeline, its entries as given (None or []: none).

    Returns:
        {"success", "success_of", "compute_s", "recovery", "retention", "reward_windows"}, and
        the mean of each work measure the agent reported ("settle_steps", "wait_steps"), as
        docs/compare-measures.md describes.

    Raises:
        ValueError: a window below 1, a first_step below 0, a reward that is not a finite
            number, or a timeline entry that is not valid (the message says which).
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1 (steps), not {window!r}")
    if isinstance(trace.first_step, bool) or not isinstance(trace.first_step, int) or trace.first_step < 0:
        raise ValueError(f"first_step must be an integer >= 0 (a session step), not {trace.first_step!r}")
    rewards = _Rewards(trace.first_step, trace.rewards)
    start, groups = _split(parse_timeline(list(world_changes or [])), rewards)
    success, success_of = _success(trace)
    compute = [float(value) for value in trace.compute_s]
    return {
        "success": success,
        "success_of": success_of,
        "compute_s": float(np.mean(compute)) if compute else None,
        **{name: float(np.mean(values)) for name, values in trace.work.items() if len(values)},
        "recovery": _recovery(groups, rewards, window),
        "retention": _retention(start, groups, rewards, window),
        "reward_windows": [
            {"step": step, "mean": rewards.mean(step, step + window)}
            for step in range(rewards.first_step, rewards.end - window + 1, window)
        ],
    }


def _split(changes: Sequence[WorldChange], rewards: _Rewards) -> tuple[list[WorldChange], list[_Group]]:
    """The entries in force at the first step, and the measured groups in step order."""
    ordered = sorted(changes, key=lambda change: (change.at, change.index))  # same at: list order
    start = [change for change in ordered if change.at <= rewards.first_step]
    groups: list[_Group] = []
    for change in ordered:
        if not rewards.first_step < change.at < rewards.end:
            continue
        if not groups or groups[-1].at != change.at:
            groups.append(_Group(change.at, [], []))
        groups[-1].entries.append(dict(change.entry))
        groups[-1].changes.append(change)
    return start, groups


def _success(trace: AgentTrace) -> tuple[float | None, str | None]:
    steps = [value for value in trace.step_success if value is not None]
    episodes = list(trace.episode_success)
    if not steps and all(value is None for value in episodes):
        return None, None  # nothing reported is_success
    if episodes:
        return sum(value is not None and bool(value) for value in episodes) / len(episodes), "episodes"
    return sum(bool(value) for value in steps) / len(steps), "steps"


def _recovery(groups: Sequence[_Group], rewards: _Rewards, window: int) -> list[dict[str, Any]]:
    measured: list[dict[str, Any]] = []
    for k, group in enumerate(groups):
        previous = groups[k - 1].at if k else rewards.first_step
        following = groups[k + 1].at if k + 1 < len(groups) else rewards.end
        row: dict[str, Any] = {"at": group.at, "changes": group.entries, "before": None, "steps": None,
                               "worst": None, "recovered": False, "too_close": True}
        if group.at - window >= previous and group.at + window <= following:
            before = rewards.mean(group.at - window, group.at)
            level = before - RECOVERY_TOLERANCE * abs(before)
            worst = math.inf
            row.update(before=before, too_close=False)
            for j in range((following - group.at) // window):
                mean = rewards.mean(group.at + j * window, group.at + (j + 1) * window)
                worst = min(worst, mean)
                if mean >= level:
                    row.update(steps=j * window, recovered=True)
                    break
            row["worst"] = worst
        measured.append(row)
    return measured


def _retention(start: Sequence[WorldChange], groups: Sequence[_Group], rewards: _Rewards,
               window: int) -> list[dict[str, Any]]:
    applied = list(start)
    states = [world_state(applied)]  # period 0: from the first step; period k: from groups[k-1]
    bounds = [rewards.first_step] + [group.at for group in groups] + [rewards.end]
    measured: list[dict[str, Any]] = []
    for k, group in enumerate(groups, start=1):
        applied += group.changes
        state = world_state(applied)
        states.append(state)
        if state == states[k - 1]:
            continue  # the world did not change: nothing returns
        earlier = [m for m in range(k - 1) if states[m] == state]
        if not earlier:
            continue
        m = earlier[-1]  # the latest earlier time in this world
        row: dict[str, Any] = {"at": group.at, "returns_to": bounds[m], "before": None, "after": None,
                               "retention": None, "too_close": True}
        if bounds[m + 1] - window >= bounds[m] and group.at + window <= bounds[k + 1]:
            before = rewards.mean(bounds[m + 1] - window, bounds[m + 1])
            after = rewards.mean(group.at, group.at + window)
            row.update(before=before, after=after, too_close=False,
                       retention=None if before == 0 else 1 - (before - after) / abs(before))
        measured.append(row)
    return measured
