"""Painted frames (`platform_sdk.server.painted`): a recorded CartPole step sends no picture, only
what the recorder needs to paint it from the observation, and that painting is Gymnasium's
picture; any wrapper that could change the observation keeps the rendered frames."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from platform_contracts.painted_frames import is_painted, painted_array
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.painted import frame_painter
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def cartpole() -> gymnasium.Env:
    return gymnasium.make("CartPole-v1", render_mode="rgb_array")


def test_gymnasiums_cartpole_and_its_usual_wrappers_are_painted() -> None:
    assert frame_painter(cartpole()) is not None
    assert frame_painter(gymnasium.make("CartPole-v1")) is None, "no rgb_array render mode: nothing to paint"


def test_a_wrapper_that_may_change_the_observation_or_a_subclass_keeps_rendered_frames() -> None:
    assert frame_painter(gymnasium.wrappers.NormalizeObservation(cartpole())) is None
    assert frame_painter(gymnasium.wrappers.FrameStackObservation(cartpole(), 2)) is None

    class Recoloured(CartPoleEnv):
        pass

    assert frame_painter(Recoloured(render_mode="rgb_array")) is None
    assert frame_painter(gymnasium.make("Acrobot-v1", render_mode="rgb_array")) is None


def test_the_painted_picture_is_gymnasiums_along_an_episode() -> None:
    env = cartpole()
    painter = frame_painter(env)
    assert painter is not None
    observation, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    worst_mean, worst_share = 0.0, 0.0
    for _ in range(150):
        rendered = env.render().astype(np.int16)
        frame = painter(80)
        assert is_painted(frame) and (frame.height, frame.width, frame.quality) == (400, 600, 80)
        painted = painted_array(frame, observation).astype(np.int16)
        assert painted.shape == rendered.shape
        difference = np.abs(painted - rendered).max(axis=2)
        worst_mean = max(worst_mean, float(difference.mean()))
        worst_share = max(worst_share, float((difference > 60).mean()))
        observation, _, terminated, truncated, _ = env.step(int(rng.integers(2)))
        if terminated or truncated:
            observation, _ = env.reset()
    # the same shapes in the same places and colours; only edge pixels (anti-aliased there) differ
    assert worst_mean < 1.0 and worst_share < 0.005, (worst_mean, worst_share)


def test_a_recorded_step_of_cartpole_sends_a_painted_frame_without_rendering() -> None:
    instance = EnvInstance(cartpole(), "cartpole")
    renders = 0
    real_render = instance.rendered

    def counted() -> object:
        nonlocal renders
        renders += 1
        return real_render()

    instance.rendered = counted  # type: ignore[method-assign]
    answers = []
    requests = [env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=1, render_later=True))]
    requests += [env_pb.EnvRequest(id=2 + i, step=env_pb.StepRequest(action=pb.Value(discrete=1), render_later=True))
                 for i in range(3)]
    requests.append(env_pb.EnvRequest(id=9, take_frames=env_pb.TakeFramesRequest()))
    for request in requests:
        answers.append(instance.handle(request))
        instance.after_answer()
    frames = [f.frame for a in answers for f in a.later_frames]
    assert len(frames) == 4 and renders == 0
    assert all(is_painted(f) and f.encoding == "painted:cartpole" and len(f.data) == 16 for f in frames)
