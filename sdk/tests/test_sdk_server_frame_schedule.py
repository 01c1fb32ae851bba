"""A thinned life's frames (`FrameSchedule`): the instance draws a `render_later` frame only for
the life steps `platform_contracts.frame_thinning` keeps, each drawn frame is the frame of its
step (encoded after the answer, it still shows that step), and one not drawn comes as a
LaterFrame without a frame. Until it is told a schedule, it draws every frame."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
import simplejpeg
from gymnasium import spaces as gs
from platform_contracts.frame_thinning import is_kept
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


class _StepCounter(gymnasium.Env):
    """Its frame shows how many steps it has taken in all (two grey bands: steps // 16 and
    steps % 16, times 16, which JPEG keeps); an episode ends after 7 steps. Counts renders."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}
    observation_space = gs.Box(0, 1e6, (1,), np.float32)
    action_space = gs.Discrete(2)
    render_mode = "rgb_array"

    def __init__(self) -> None:
        self.steps = 0
        self.t = 0
        self.renders = 0
        self.buffer = np.zeros((16, 16, 1), np.uint8)  # rendered into in place, as renderers do

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.full(1, self.steps, np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.steps += 1
        self.t += 1
        return np.full(1, self.steps, np.float32), 1.0, self.t >= 7, False, {}

    def render(self) -> np.ndarray:
        self.renders += 1
        self.buffer[:8] = (self.steps // 16) * 16
        self.buffer[8:] = (self.steps % 16) * 16
        return self.buffer


def _shown_steps(frame: env_pb.Frame) -> int:
    """The step count a _StepCounter frame shows."""
    pixels = simplejpeg.decode_jpeg(frame.data, colorspace="GRAY")
    high, low = (round(float(np.median(pixels[rows])) / 16) for rows in (slice(0, 8), slice(8, 16)))
    return high * 16 + low


def _play(instance: EnvInstance, steps: int, schedule: env_pb.FrameSchedule | None,
          with_request: int = 1) -> dict[int, env_pb.LaterFrame]:
    """reset (request 1), then `steps` steps (render_later, auto_reset; step n is request n + 1),
    the schedule merged into request `with_request`, then take_frames: the later frames by
    request id."""
    requests = [env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=0, render_later=True))]
    requests += [env_pb.EnvRequest(id=2 + i, step=env_pb.StepRequest(action=pb.Value(discrete=1), auto_reset=True,
                                                                      render_later=True)) for i in range(steps)]
    requests.append(env_pb.EnvRequest(id=2 + steps, take_frames=env_pb.TakeFramesRequest()))
    if schedule is not None:
        requests[with_request - 1].frame_schedule.CopyFrom(schedule)
    came: dict[int, env_pb.LaterFrame] = {}
    for request in requests:
        answer = instance.handle(request)
        assert not answer.HasField("error"), answer.error
        for later in answer.later_frames:
            came[later.request_id] = later
        instance.after_answer()
    return came


def _drawn(came: dict[int, env_pb.LaterFrame]) -> dict[int, env_pb.LaterFrame]:
    return {request_id: later for request_id, later in came.items() if later.HasField("frame")}


def test_a_first_session_draws_exactly_the_kept_frames_each_of_its_step() -> None:
    env = _StepCounter()
    schedule = env_pb.FrameSchedule(offset=0, first_session=True, max_frames=40)
    came = _play(EnvInstance(env, "counter"), 120, schedule)

    assert sorted(came) == list(range(1, 122)), "every render_later request gets its LaterFrame"
    drawn = _drawn(came)
    kept = [t for t in range(1, 121) if is_kept(t, 0, 40)]
    assert sorted(drawn) == [1] + [t + 1 for t in kept]  # the life's first reset row, then step t = request t + 1
    assert _shown_steps(drawn[1].frame) == 0
    for t in kept:
        assert _shown_steps(drawn[t + 1].frame) == t, f"the frame of step {t} shows step {t}"
    ended = [t for t in kept if t % 7 == 0]  # a kept step that ended its episode also drew its final frame
    assert ended and all(drawn[t + 1].HasField("final_frame") for t in ended)
    assert env.renders == 1 + len(kept) + len(ended), "frames the life drops are never drawn"


def test_a_later_session_counts_from_its_offset_and_draws_no_reset_frame() -> None:
    env = _StepCounter()
    schedule = env_pb.FrameSchedule(offset=100, first_session=False, frame_every=3)
    drawn = _drawn(_play(EnvInstance(env, "counter"), 30, schedule))

    kept = [n for n in range(1, 31) if (100 + n) % 3 == 0]
    assert sorted(drawn) == [n + 1 for n in kept]
    assert all(_shown_steps(drawn[n + 1].frame) == n for n in kept)


def test_every_frame_is_drawn_until_the_schedule_comes() -> None:
    env = _StepCounter()
    schedule = env_pb.FrameSchedule(offset=0, first_session=True, max_frames=4)  # kept: 0, 1, 3, 7
    drawn = _drawn(_play(EnvInstance(env, "counter"), 12, schedule, with_request=7))

    # requests 1..6 (the reset, steps 1-5) came before the schedule: all drawn; then step 7 only
    assert sorted(drawn) == [1, 2, 3, 4, 5, 6, 8]
    assert [_shown_steps(drawn[r].frame) for r in sorted(drawn)] == [0, 1, 2, 3, 4, 5, 7]


def test_without_a_schedule_every_frame_is_drawn() -> None:
    env = _StepCounter()
    drawn = _drawn(_play(EnvInstance(env, "counter"), 10, None))
    assert sorted(drawn) == list(range(1, 12))
    assert [_shown_steps(drawn[r].frame) for r in range(1, 12)] == list(range(11))


def test_a_life_that_thins_nothing_draws_every_frame_resets_too() -> None:
    env = _StepCounter()
    schedule = env_pb.FrameSchedule(offset=50, first_session=False)  # frame_every 0, max_frames 0
    drawn = _drawn(_play(EnvInstance(env, "counter"), 10, schedule))
    assert sorted(drawn) == list(range(1, 12))
