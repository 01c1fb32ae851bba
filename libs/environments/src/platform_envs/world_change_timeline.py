"""The wrapper that puts a session's world-change timeline on its hosted environment.

`python -m platform_sdk` takes the `world_changes` kwarg off the kwargs before the factory
runs (`cli.parse_args`), parses and checks it once against the live environment
(`checked_timeline`: form, names, index ranges, MuJoCo or not) and wraps the environment in a
`WorldChangeTimeline` (`with_timeline`). An environment without a timeline is not wrapped at all.

A change is applied at the first reset or step once the session has taken `at` steps (so
before step `at`, or at a reset between step `at - 1` and step `at`). The wrapper keeps, for
the instance, what the latest reset or step applied (`last_applied`: each entry with "index"
and "session_step") and, while a sensor change is in force, the observation before it
(`last_true_observation`): the instance puts them in the answer's ForRecording. Entries with
"reveal": true also go (as given) in that reset's or step's info["world_changes"].

The wrapper pickles with the environment (the environment server's snapshots and exported
states): its step count, the changes in force and the timeline, so a restore carries on
exactly. Per step, without a change due and no sensor change in force, it costs one integer
comparison and a few attribute writes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from platform_contracts.world_changes import (
    MUJOCO_KINDS,
    SENSOR_KINDS,
    WorldChange,
    WorldChangeError,
    parse_timeline,
)
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envs.world_change_effects import (
    BuiltValues,
    ObservationSensors,
    apply_model_change,
    built_values,
    find_mujoco,
    live_facts,
)

__all__ = [
    "Recorded",
    "WorldChangeTimeline",
    "checked_timeline",
    "latest_record",
    "timeline_of",
    "with_timeline",
    "write_recorded",
]


def checked_timeline(env: Any, timeline: Any, env_id: str = "") -> tuple[WorldChange, ...]:
    """A timeline as written (the `world_changes` kwarg's value: a list of entries; None: none)
    parsed and checked against `env`'s live model: the one check an instance makes (the broker
    checked it against the catalog's facts at create).

    Raises:
        WorldChangeError: the timeline is malformed or names something `env` lacks (one line
            naming `env_id`, the entry's field and what it allows); the environment server
            reports it as the instance's start failure.
    """
    if timeline is None or timeline == []:
        return ()
    try:
        return parse_timeline(timeline, live_facts(env))
    except WorldChangeError as exc:
        raise WorldChangeError(f"{env_id or 'the environment'}: {exc.path}", exc.problem) from None


def with_timeline(env: Any, changes: Sequence[WorldChange]) -> Any:
    """`env` wrapped in a `WorldChangeTimeline` of `changes` (checked against `env`, or an
    environment of the same model: `checked_timeline`); `env` itself when there are none."""
    if not changes:
        return env
    return WorldChangeTimeline(env, changes)


def timeline_of(env: Any) -> WorldChangeTimeline | None:
    """The `WorldChangeTimeline` `env` is (the outermost wrapper), else None."""
    return env if isinstance(env, WorldChangeTimeline) else None


@dataclass(frozen=True, slots=True)
class Recorded:
    """What one reset or step has for its answer's ForRecording.

    Attributes:
        applied: the records of the changes it applied (entry, "index", "session_step").
        true_observation: its observation before sensor changes; None when none is in force.
    """

    applied: tuple[dict[str, Any], ...]
    true_observation: Any


def latest_record(timeline: WorldChangeTimeline) -> Recorded | None:
    """What the latest reset or step of `timeline` has for ForRecording; None when nothing."""
    applied, true_observation = timeline.last_applied, timeline.last_true_observation
    if not applied and true_observation is None:
        return None
    return Recorded(applied, true_observation)


def write_recorded(
    target: env_pb.ForRecording,
    applied: Sequence[dict[str, Any]],
    true_observation: Any,
    write_observation: Callable[[Any, Any], None],
) -> None:
    """Fill `target` (a ForRecording) with `applied` records as JSON and, when not None, the
    true observation (written by `write_observation`, the observation space's value writer)."""
    target.SetInParent()
    target.world_changes_json.extend(json.dumps(record) for record in applied)
    if true_observation is not None:
        write_observation(target.true_observation, true_observation)


_NOTHING: list[Any] = []  # nothing revealed (never appended to)


class WorldChangeTimeline(gymnasium.Wrapper[Any, Any, Any, Any]):
    """Applies a checked timeline to `env` at its steps (see the module docstring).

    Attributes:
        changes: the timeline, in list order.
        session_steps: the steps taken so far, across episodes.
        last_applied: the records of the changes the latest reset or step applied (usually ()).
        last_true_observation: the observation before sensor changes, when one is in force;
            else None.
    """

    def __init__(self, env: gymnasium.Env[Any, Any], changes: Sequence[WorldChange]) -> None:
        super().__init__(env)
        self.changes = tuple(changes)
        self.session_steps = 0
        self.last_applied: tuple[dict[str, Any], ...] = ()
        self.last_true_observation: Any = None
        self._due = sorted(self.changes, key=lambda change: (change.at, change.index))
        self._next = 0  # the place in _due of the next change to apply
        self._next_at: float = self._due[0].at if self._due else math.inf
        kinds = {change.change for change in self.changes}
        self._built: BuiltValues | None = None
        if kinds & MUJOCO_KINDS:
            handle = find_mujoco(env)
            if handle is None:
                raise ValueError("the timeline changes a MuJoCo model and the environment has none")
            self._built = built_values(handle)
        self._offsets: dict[str, np.ndarray] = {}
        self._sensors = ObservationSensors(env.observation_space) if kinds & SENSOR_KINDS else None
        self._has_sensor_kinds = self._sensors is not None

    @property
    def keeps_observation(self) -> bool:
        """The observations it passes on are the hosted environment's (no sensor changes)."""
        return not self._has_sensor_kinds

    @property
    def render_is_observation(self) -> bool:
        """As the hosted environment says, unless sensor changes can make the observation differ
        from what it renders."""
        return not self._has_sensor_kinds and getattr(self.env, "render_is_observation", False) is True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        revealed = self._apply_due() if self.session_steps >= self._next_at else self._nothing_due()
        observation, info = self.env.reset(seed=seed, options=options)
        observation = self._seen(observation, self.session_steps)
        if revealed:
            info = {**info, "world_changes": revealed}
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        step = self.session_steps
        revealed = self._apply_due() if step >= self._next_at else self._nothing_due()
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.session_steps = step + 1
        observation = self._seen(observation, step)
        if revealed:
            info = {**info, "world_changes": revealed}
        return observation, reward, terminated, truncated, info

    def _nothing_due(self) -> list[Any]:
        self.last_applied = ()
        return _NOTHING

    def _apply_due(self) -> list[Any]:
        """Apply every change due by now; returns the revealed entries."""
        applied: list[dict[str, Any]] = []
        revealed: list[Any] = []
        due, steps = self._due, self.session_steps
        while self._next < len(due) and due[self._next].at <= steps:
            change = due[self._next]
            self._next += 1
            self._apply(change)
            applied.append(change.applied(steps))
            if change.reveal:
                revealed.append(dict(change.entry))
        self._next_at = due[self._next].at if self._next < len(due) else math.inf
        self.last_applied = tuple(applied)
        return revealed

    def _apply(self, change: WorldChange) -> None:
        if change.change in SENSOR_KINDS:
            assert self._sensors is not None
            self._sensors.apply(change)
            return
        handle = find_mujoco(self.env)
        if handle is None or self._built is None:
            raise ValueError(f"world_changes[{change.index}]: {change.change} needs a MuJoCo model")
        apply_model_change(handle, self._built, change, self._offsets)

    def _seen(self, observation: Any, session_step: int) -> Any:
        sensors = self._sensors
        if sensors is None or not sensors.in_force:
            self.last_true_observation = None
            return observation
        self.last_true_observation = observation
        return sensors.sense(observation, session_step)
