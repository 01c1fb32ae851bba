"""`hold`: one action repeated for up to `steps` steps in one uninterrupted stretch.

The action is decoded and checked once. The hold stops after the step that ends the episode
(terminated or truncated; it does not reset), except in endless sessions, where the episode
restarts in place and the hold goes on. `frames[i]` is the frame after step i (in an endless
session, after a restart: the new episode's first, as a step's `frame`). With `keep_steps`,
`kept[i]` is step i's full `StepResponse` (its frame too when `frames`), as a step would have
answered it. Without `keep_steps`, the hold's `for_recording` holds the world changes its
steps applied and the last observation's true value (`platform_envs.world_change_timeline`).
"""

from __future__ import annotations

from typing import Any, Protocol

from platform_contracts.limits import MAX_HOLD_STEPS, MAX_HOLD_STEPS_WITH_FRAMES
from platform_contracts.spaces import encode_value, value_writer
from platform_contracts.values import datamap_from_dict
from platform_envs.world_change_timeline import write_recorded
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server.actions import decode_action
from platform_sdk.server.auto_reset import Steppable, advance, write_step
from platform_sdk.server.errors import CommandError


class Holdable(Steppable, Protocol):
    """What a hold needs of the instance (an `EnvInstance`): what `advance` needs, and its
    checks that it has been reset and renders frames."""

    def require_reset(self, command: str) -> None: ...
    def check_renders(self) -> None: ...


def check_hold(command: env_pb.HoldRequest) -> None:
    """Raises CommandError (INVALID_ARGUMENT) when `command` asks for too few or too many steps."""
    steps = command.steps
    if not 1 <= steps <= MAX_HOLD_STEPS:
        raise CommandError(
            env_pb.ERROR_CODE_INVALID_ARGUMENT,
            f"hold steps must be between 1 and {MAX_HOLD_STEPS}, not {steps}",
        )
    if command.frames and steps > MAX_HOLD_STEPS_WITH_FRAMES:
        raise CommandError(
            env_pb.ERROR_CODE_INVALID_ARGUMENT,
            f"a hold with frames is limited to {MAX_HOLD_STEPS_WITH_FRAMES} steps, not {steps}: "
            "pass frames=False to hold for longer",
        )


def answer_hold(instance: Holdable, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
    """The `hold` command (see the module docstring)."""
    command = request.hold
    check_hold(command)
    instance.require_reset("hold")
    env = instance.env
    action = decode_action(command.action, env.action_space)
    frames, keep = command.frames, command.keep_steps
    if frames:
        instance.check_renders()
    result = response.hold
    rewards = result.rewards
    observation_space = env.observation_space
    taken = 0
    applied: list[dict[str, Any]] = []  # the world changes of the steps, without keep_steps
    record = instance.timeline is not None and not keep
    while True:
        stepped = advance(instance, action, render=frames, auto_reset=False)
        taken += 1
        if record:
            for recorded in (stepped.ending.recorded if stepped.ending else None, stepped.recorded):
                if recorded is not None:
                    applied.extend(recorded.applied)
        rewards.append(stepped.reward)
        if stepped.frame is not None:
            result.frames.add().CopyFrom(stepped.frame)
        if keep:
            write_step(result.kept.add(), stepped, observation_space)
        if stepped.terminated or stepped.truncated or taken == command.steps:
            break
    result.steps = taken
    result.observation.CopyFrom(encode_value(stepped.observation, observation_space))
    result.terminated = stepped.terminated
    result.truncated = stepped.truncated
    if stepped.info:
        result.info.CopyFrom(datamap_from_dict(stepped.info))
    true_observation = stepped.recorded.true_observation if stepped.recorded is not None else None
    if record and (applied or true_observation is not None):
        write_recorded(result.for_recording, applied, true_observation, value_writer(observation_space))
