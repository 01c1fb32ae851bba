"""`render_later`: frames rendered with a reset or step, JPEG-encoded after the answer, sent with
the next answer (`later_frames`) or a `take_frames` answer; the same bytes `render` gives."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
import platform_testing.env_server_client as helpers
import simplejpeg
from platform_contracts.painted_frames import painted_array
from gymnasium import spaces as gs
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


class _Painter(gymnasium.Env):
    """Its frame shows how far the episode has gone; an episode ends after 3 steps."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}
    observation_space = gs.Box(0, 10, (1,), np.float32)
    action_space = gs.Discrete(2)
    render_mode = "rgb_array"

    def __init__(self) -> None:
        self.t = 0
        self.episodes = 0
        self.buffer = np.zeros((16, 24, 3), np.uint8)  # rendered into in place, as renderers do

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        self.episodes += 1
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return np.full(1, self.t, np.float32), 1.0, self.t >= 3, False, {}

    def render(self) -> np.ndarray:
        self.buffer[:] = 0
        self.buffer[: 4 * self.t + 1, :, 0] = 250
        self.buffer[:, : 6 * self.episodes, 1] = 200
        return self.buffer


def _request(request_id: int, **command: Any) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(id=request_id, **command)


def _step(request_id: int, action: int = 1, **fields: Any) -> env_pb.EnvRequest:
    return _request(request_id, step=env_pb.StepRequest(action=pb.Value(discrete=action), auto_reset=True, **fields))


def _run(instance: EnvInstance, later: bool) -> list[env_pb.EnvResponse]:
    """reset, four steps (the third ends the episode and resets), then take_frames."""
    flag = {"render_later": True} if later else {"render": True}
    requests = [_request(1, reset=env_pb.ResetRequest(seed=3, **flag))]
    requests += [_step(2 + i, **flag) for i in range(4)]
    requests.append(_request(9, take_frames=env_pb.TakeFramesRequest()))
    answers = []
    for request in requests:
        answers.append(instance.handle(request))
        instance.after_answer()
    return answers


def test_later_frames_come_with_the_next_answer_and_are_the_frames_render_gives() -> None:
    inline = _run(EnvInstance(_Painter(), "painter"), later=False)
    later = _run(EnvInstance(_Painter(), "painter"), later=True)
    assert not any(a.HasField("error") for a in inline + later), later

    assert later[0].reset.frame_later and not later[0].reset.HasField("frame")
    assert all(a.step.frame_later and not a.step.HasField("frame") for a in later[1:5])
    assert not later[0].later_frames
    # Each answer carries the frame of the request before it; take_frames the last one.
    assert [[f.request_id for f in a.later_frames] for a in later[1:]] == [[1], [2], [3], [4], [5]]
    came = {f.request_id: f for a in later for f in a.later_frames}
    assert came[1].frame == inline[0].reset.frame
    for request_id, answer in zip(range(2, 6), inline[1:5], strict=True):
        assert came[request_id].frame == answer.step.frame  # byte for byte the same JPEG
    ended = inline[3].step
    assert ended.HasField("auto_reset") and later[3].step.HasField("auto_reset")
    assert came[4].final_frame == ended.auto_reset.final_frame != ended.frame
    assert not any(came[i].HasField("final_frame") for i in (1, 2, 3, 5))
    assert inline[-1].WhichOneof("result") == "take_frames" and not inline[-1].later_frames


def test_render_wins_over_render_later_and_a_failed_step_keeps_no_frame() -> None:
    instance = EnvInstance(_Painter(), "painter")
    reset = instance.handle(_request(1, reset=env_pb.ResetRequest(seed=1, render=True, render_later=True)))
    assert reset.reset.frame.encoding == "jpeg" and not reset.reset.frame_later
    failed = instance.handle(_step(2, action=5, render_later=True))
    assert failed.error.code == env_pb.ERROR_CODE_INVALID_ACTION and not failed.later_frames
    instance.after_answer()
    taken = instance.handle(_request(3, take_frames=env_pb.TakeFramesRequest()))
    assert taken.WhichOneof("result") == "take_frames" and not taken.later_frames


def test_an_environment_without_frames_refuses_render_later() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "cartpole")
    answer = instance.handle(_request(1, reset=env_pb.ResetRequest(render_later=True)))
    assert answer.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED and "renders no frames" in answer.error.message


def test_the_server_process_sends_later_frames_over_grpc() -> None:
    with helpers.ServerProcess(["--gym-id", "CartPole-v1", "--kwargs", '{"render_mode": "rgb_array"}']) as server, \
            helpers.EnvClient(server.address) as client:
        reset = client.ok(reset=env_pb.ResetRequest(seed=1, render_later=True))
        assert reset.reset.frame_later and not reset.reset.HasField("frame")
        step = client.ok(step=env_pb.StepRequest(action=pb.Value(discrete=0), render_later=True))
        assert [f.request_id for f in step.later_frames] == [reset.id]
        taken = client.ok(take_frames=env_pb.TakeFramesRequest())
        assert [f.request_id for f in taken.later_frames] == [step.id]
        rendered = client.ok(render=env_pb.RenderRequest()).render.frame  # nothing moved since
        assert (rendered.encoding, rendered.width, rendered.height) == ("jpeg", 600, 400)
        # CartPole's recorded frames are painted from the observation by the recorder
        # (platform_sdk.server.painted): the same picture, drawn off the step path
        later = taken.later_frames[0].frame
        assert (later.encoding, later.width, later.height) == ("painted:cartpole", 600, 400)
        tensor = step.step.observation.tensor
        painted = painted_array(later, np.frombuffer(tensor.data, dtype=np.dtype(tensor.dtype)))
        shown = simplejpeg.decode_jpeg(rendered.data)
        assert np.abs(painted.astype(int) - shown.astype(int)).mean() < 3


class _Screen(gymnasium.Env):
    """Its observation is its screen (as Atari's): render() gives the observation, except at
    step `overlay_at`, whose frame carries an overlay the observation has not."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}
    observation_space = gs.Box(0, 255, (16, 24, 3), np.uint8)
    action_space = gs.Discrete(2)
    render_mode = "rgb_array"

    def __init__(self, overlay_at: int = -1) -> None:
        self.t = 0
        self.overlay_at = overlay_at
        self.screen = np.zeros((16, 24, 3), np.uint8)

    def _paint(self) -> np.ndarray:
        self.screen[:] = 0
        self.screen[: 4 * self.t + 1, :, 0] = 250
        self.screen[:, : 5 + self.t, 2] = 120
        return self.screen.copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._paint(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return self._paint(), 1.0, self.t >= 3, False, {}

    def render(self) -> np.ndarray:
        frame = self.screen.copy()
        if self.t == self.overlay_at:
            frame[0, 0] = 7
        return frame


def _observation_bytes(value: pb.Value) -> bytes:
    return value.tensor.data


def test_a_frame_that_is_its_observation_comes_later_as_an_observation_frame_that_encodes_to_renders_jpeg() -> None:
    from platform_contracts.frames import OBSERVATION, observation_jpeg

    inline = _run(EnvInstance(_Screen(), "screen", jpeg_quality=70), later=False)
    later = _run(EnvInstance(_Screen(), "screen", jpeg_quality=70), later=True)
    assert not any(a.HasField("error") for a in inline + later), later

    assert later[0].reset.frame_later and all(a.step.frame_later for a in later[1:5])
    came = {f.request_id: f for a in later for f in a.later_frames}
    assert sorted(came) == [1, 2, 3, 4, 5]
    reset_marker = came[1].frame
    assert (reset_marker.encoding, reset_marker.width, reset_marker.height, reset_marker.quality) == (
        OBSERVATION, 24, 16, 70)
    assert not reset_marker.data
    # Encoded from the observation each answer carried, it is the JPEG `render` gives.
    assert observation_jpeg(reset_marker, _observation_bytes(later[0].reset.observation)) == inline[0].reset.frame.data
    for request_id, mine, rendered in zip(range(2, 6), later[1:5], inline[1:5], strict=True):
        assert came[request_id].frame.encoding == OBSERVATION
        assert observation_jpeg(came[request_id].frame, _observation_bytes(mine.step.observation)) == (
            rendered.step.frame.data)
    ended = later[3].step.auto_reset  # the third step ended the episode and reset
    assert came[4].final_frame.encoding == OBSERVATION
    assert observation_jpeg(came[4].final_frame, _observation_bytes(ended.final_observation)) == (
        inline[3].step.auto_reset.final_frame.data)


def test_a_frame_that_differs_from_its_observation_comes_later_as_jpeg() -> None:
    from platform_contracts.frames import OBSERVATION

    later = _run(EnvInstance(_Screen(overlay_at=2), "screen"), later=True)
    inline = _run(EnvInstance(_Screen(overlay_at=2), "screen"), later=False)
    came = {f.request_id: f for a in later for f in a.later_frames}
    # Step 2 (request 3) renders an overlay: its frame is the JPEG `render` gives.
    assert came[3].frame == inline[2].step.frame and came[3].frame.encoding == "jpeg"
    assert all(came[i].frame.encoding == OBSERVATION for i in (1, 2, 4, 5))


class _ScreenSayingSo(_Screen):
    """A `_Screen` that says its render() is its observation: the server must not render it."""

    render_is_observation = True

    def __init__(self) -> None:
        super().__init__()
        self.renders = 0

    def render(self) -> np.ndarray:
        self.renders += 1
        return super().render()


def test_an_environment_whose_render_is_its_observation_is_not_rendered_and_its_frames_are_the_same() -> None:
    checked = _run(EnvInstance(_Screen(), "screen"), later=True)
    env = _ScreenSayingSo()
    trusted = _run(EnvInstance(env, "screen"), later=True)
    assert not any(a.HasField("error") for a in trusted), trusted
    assert env.renders == 0
    # The same observation frames as when each rendered frame is compared with its observation.
    assert [list(a.later_frames) for a in trusted] == [list(a.later_frames) for a in checked]
    came = {f.request_id: f for a in trusted for f in a.later_frames}
    assert sorted(came) == [1, 2, 3, 4, 5] and came[4].final_frame.encoding == "observation"


def test_a_wrapper_does_not_pass_render_is_observation_on() -> None:
    env = _ScreenSayingSo()
    wrapped = gymnasium.wrappers.TimeLimit(env, max_episode_steps=100)
    answers = _run(EnvInstance(wrapped, "screen"), later=True)
    assert not any(a.HasField("error") for a in answers), answers
    assert env.renders == 6  # reset, four steps, and the final frame of the episode that ended
    assert all(f.frame.encoding == "observation" for a in answers for f in a.later_frames)


class _PainterSayingSo(_Painter):
    """Says its render() is its observation, but its observation is a number, not a screen."""

    render_is_observation = True


def test_a_false_render_is_observation_loses_the_frames_not_the_steps(caplog) -> None:
    with caplog.at_level("ERROR"):
        answers = _run(EnvInstance(_PainterSayingSo(), "painter"), later=True)
    assert not any(a.HasField("error") for a in answers), answers
    came = [f for a in answers for f in a.later_frames]
    assert [f.request_id for f in came] == [1, 2, 3, 4, 5]
    assert all(not f.HasField("frame") for f in came)
    assert "painter: the frame of request 1 could not be encoded" in caplog.text
    assert "render_is_observation" in caplog.text and "not a height x width x 3 uint8 image" in caplog.text
