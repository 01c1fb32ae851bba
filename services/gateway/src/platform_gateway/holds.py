"""The limits of a hold, checked before it reaches the environment."""

from __future__ import annotations

from platform_contracts.limits import MAX_HOLD_STEPS, MAX_HOLD_STEPS_WITH_FRAMES

from platform_gateway.errors import InvalidArgumentError


def check_hold(steps: object, frames: bool, where: str) -> None:
    """Raise InvalidArgumentError (422) for a hold the platform does not take."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InvalidArgumentError(f"{where}: steps must be a positive integer, not {steps!r}")
    if steps > MAX_HOLD_STEPS:
        raise InvalidArgumentError(f"{where}: a hold is at most {MAX_HOLD_STEPS:,} steps, not {steps:,}")
    if frames and steps > MAX_HOLD_STEPS_WITH_FRAMES:
        raise InvalidArgumentError(
            f"{where}: a hold returns frames for at most {MAX_HOLD_STEPS_WITH_FRAMES} steps, not {steps:,}; "
            "set frames to false for longer holds"
        )
