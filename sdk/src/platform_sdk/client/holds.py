"""`env.hold(action, n)`: one action repeated for n steps in one uninterrupted stretch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from platform_contracts.limits import MAX_HOLD_STEPS, MAX_HOLD_STEPS_WITH_FRAMES
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors


@dataclass
class Held:
    """What a hold did.

    Attributes:
        steps: steps taken (fewer than asked when the episode ended).
        rewards: the reward of every step, float64 (steps,).
        frames: a JPEG (bytes) after every step; empty with `frames=False`.
        observation: the observation after the last step.
        terminated, truncated: how the last step ended.
        info: the last step's info.
    """

    steps: int
    rewards: np.ndarray
    frames: list[bytes]
    observation: Any
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    def images(self) -> list[np.ndarray]:
        """The frames decoded to RGB arrays (needs simplejpeg: the `frames` extra)."""
        from platform_sdk.client.results import decode_jpeg

        return [decode_jpeg(data) for data in self.frames]


class PendingHold:
    """A hold sent with `wait=False`: the environment keeps moving while the agent thinks.

    `result()` waits for it and returns the `Held`; the session takes no other request until
    then.
    """

    def __init__(self, finish: Callable[[], Held], steps: int) -> None:
        self._finish = finish
        self._held: Held | None = None
        self.steps = steps

    def done(self) -> bool:
        """Whether `result()` was already called."""
        return self._held is not None

    def result(self) -> Held:
        if self._held is None:
            self._held = self._finish()
        return self._held


def check_hold(steps: int, frames: bool, where: str) -> None:
    """Raise InvalidRequestError for a hold the platform would refuse, before sending it."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise errors.InvalidRequestError(f"{where}: hold steps must be a positive integer, not {steps!r}")
    if steps > MAX_HOLD_STEPS:
        raise errors.InvalidRequestError(f"{where}: a hold is at most {MAX_HOLD_STEPS:,} steps, not {steps:,}")
    if frames and steps > MAX_HOLD_STEPS_WITH_FRAMES:
        raise errors.InvalidRequestError(
            f"{where}: a hold returns frames for at most {MAX_HOLD_STEPS_WITH_FRAMES} steps, not {steps:,}; "
            "pass frames=False for longer holds"
        )


def held_from(result: env_pb.HoldResponse, observation: Any, info: dict[str, Any]) -> Held:
    return Held(
        steps=result.steps,
        rewards=np.asarray(result.rewards, dtype=np.float64),
        frames=[frame.data for frame in result.frames],
        observation=observation,
        terminated=result.terminated,
        truncated=result.truncated,
        info=info,
    )
