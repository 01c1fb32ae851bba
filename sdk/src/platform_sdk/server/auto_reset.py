"""One step of the environment, with the reset that follows an ending when the caller asked
for auto-reset or the session is endless.

The step's ending is kept in an `Ending` (the final observation, info and frame, the flags the
environment reported); the environment is reset at once (no seed: its RNG goes on), and the
step reports the new episode's first observation and info. Endless sessions also report
terminated = truncated = False on the step itself.

With a world-change timeline (`platform_envs.world_change_timeline`), what the step
applied and its true observation go in the ending's `final_for_recording`, and what the reset
applied and the new episode's first true observation in the step's `for_recording`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from platform_contracts.spaces import value_writer
from platform_contracts.values import datamap_from_dict
from platform_envs.world_change_timeline import (
    Recorded,
    WorldChangeTimeline,
    latest_record,
    write_recorded,
)
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server.frame_schedule import FrameSchedule


class Steppable(Protocol):
    """What `advance` needs of the instance it steps (an `EnvInstance`): its environment and
    timeline, whether it is endless, its frames; it sets the latest observation and info."""

    observation: Any
    info: Any
    frame_schedule: FrameSchedule  # counts the steps taken

    @property
    def env(self) -> Any: ...
    @property
    def timeline(self) -> WorldChangeTimeline | None: ...
    @property
    def endless(self) -> bool: ...
    def frame(self) -> env_pb.Frame: ...
    def later_frame(self, copy: bool = False) -> Any: ...


@dataclass(slots=True)
class Ending:
    """How an episode ended, when the environment was reset in the same step."""

    observation: Any
    info: Any
    terminated: bool
    truncated: bool
    frame: env_pb.Frame | None
    later_frame: Any = None  # the final frame as an array, for render_later
    recorded: Recorded | None = None  # the step's world changes and true final observation


@dataclass(slots=True)
class Stepped:
    """What one step produced (not yet encoded)."""

    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    info: Any
    frame: env_pb.Frame | None
    ending: Ending | None
    later_frame: Any = None  # the frame as an array, for render_later (encoded after the answer)
    recorded: Recorded | None = None  # for ForRecording: of the step, or of the reset after an ending


def advance(instance: Steppable, action: Any, *, render: bool, auto_reset: bool,
            render_later: bool = False) -> Stepped:
    """Step `instance`'s environment with an already checked `action`.

    Args:
        render: also render the frame after the step (and the final frame of an ending).
        render_later: render them too, but leave them unencoded (`Stepped.later_frame`).
        auto_reset: reset when the step ends the episode (always done in endless sessions).
    """
    env, timeline = instance.env, instance.timeline
    observation, reward, terminated, truncated, info = env.step(action)
    instance.frame_schedule.steps_taken += 1
    recorded = None if timeline is None else latest_record(timeline)
    terminated, truncated = bool(terminated), bool(truncated)
    ending = None
    if (terminated or truncated) and (auto_reset or instance.endless):
        final_frame = instance.frame() if render else None
        # A copy: the reset's frame may be rendered into the same buffer.
        final_later = instance.later_frame(copy=True) if render_later else None
        ending = Ending(observation, info, terminated, truncated, final_frame, final_later, recorded)
        observation, info = env.reset()
        recorded = None if timeline is None else latest_record(timeline)
        if instance.endless:
            terminated = truncated = False
    instance.observation, instance.info = observation, info
    frame = instance.frame() if render else None
    later = instance.later_frame() if render_later else None
    return Stepped(observation, float(reward), terminated, truncated, info, frame, ending, later, recorded)


def write_step(result: env_pb.StepResponse, stepped: Stepped, observation_space: Any) -> None:
    """Encode `stepped` into `result`."""
    write_observation = value_writer(observation_space)
    write_observation(result.observation, stepped.observation)
    result.reward = stepped.reward
    result.terminated = stepped.terminated
    result.truncated = stepped.truncated
    if stepped.info:
        result.info.CopyFrom(datamap_from_dict(stepped.info))
    if stepped.frame is not None:
        result.frame.CopyFrom(stepped.frame)
    if stepped.recorded is not None:
        recorded = stepped.recorded
        write_recorded(result.for_recording, recorded.applied, recorded.true_observation, write_observation)
    ending = stepped.ending
    if ending is not None:
        ended = result.auto_reset
        ended.SetInParent()
        write_observation(ended.final_observation, ending.observation)
        if ending.info:
            ended.final_info.CopyFrom(datamap_from_dict(ending.info))
        ended.terminated = ending.terminated
        ended.truncated = ending.truncated
        if ending.frame is not None:
            ended.final_frame.CopyFrom(ending.frame)
        if ending.recorded is not None:
            final = ending.recorded
            write_recorded(ended.final_for_recording, final.applied, final.true_observation, write_observation)
