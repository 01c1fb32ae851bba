"""Which `render_later` frames an instance draws: all of them, until the env host tells it its
session's place in a thinned life (`FrameSchedule`, merged into a request), then only those
the life keeps (`platform_contracts.frame_thinning`, the recorder's rule).

A life step counts actions across the whole life: the frame after the session's n-th step is at
life step `offset + n` (n counts every step the instance has taken, held steps too, as the
recorder counts the session's step events). A reset's frame shares its life step with the step
before it, so only the life's very first row keeps one: a reset of the life's first session
before any step. Drawing fewer frames than the recorder keeps would lose recorded data, so
anything unsure (no schedule yet) draws.
"""

from __future__ import annotations

from platform_contracts.frame_thinning import is_kept, thinning
from simulusion.env.v1 import environment_pb2 as env_pb


class FrameSchedule:
    """The instance's thinning schedule (None until told) and the steps it has taken."""

    __slots__ = ("_schedule", "steps_taken")

    def __init__(self) -> None:
        self._schedule: env_pb.FrameSchedule | None = None
        self.steps_taken = 0

    def set(self, schedule: env_pb.FrameSchedule) -> None:
        """Draw only what `schedule` keeps from now on (a life that thins nothing draws all)."""
        if not thinning(schedule.frame_every, schedule.max_frames):
            self._schedule = None
            return
        self._schedule = env_pb.FrameSchedule()
        self._schedule.CopyFrom(schedule)

    def step_keeps(self) -> bool:
        """The frame after the step about to be taken is kept (drawn)."""
        schedule = self._schedule
        if schedule is None:
            return True
        return is_kept(schedule.offset + self.steps_taken + 1, schedule.frame_every, schedule.max_frames)

    def reset_keeps(self) -> bool:
        """The frame of a reset now is kept (drawn)."""
        schedule = self._schedule
        return schedule is None or (schedule.first_session and self.steps_taken == 0)
