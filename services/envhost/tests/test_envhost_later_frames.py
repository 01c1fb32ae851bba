"""Frames of sessions that record them: asked with `render_later`, they come with the instance's
next answer, or are taken when the client goes quiet, before a command whose answer the env
host does not read, and before the instance stops; an instance that dies gives them up."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import simplejpeg
from envhost_testkit import EnvHostProcess, events_until_closed, new_session_id, recorded_events, stop_session
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from platform_contracts.painted_frames import painted_array
from step_path_kit import start

PAINTED = "painted:cartpole"  # CartPole's recorded frames: painted by the recorder from the observation
PONG = control_pb.CatalogEntry(id="pong", factory="platform_envs.adapters.atari:make_env",
                               kwargs_json='{"game": "pong"}')

# An environment server that knows nothing of render_later, as one of an older SDK.
OLDER_SERVER_ENV = """
import gymnasium
from platform_sdk.server import instance


def _ignoring_render_later(answer):
    def answer_without_it(self, request, response):
        command = request.WhichOneof("command")
        getattr(request, command).render_later = False
        answer(self, request, response)
    return answer_without_it


instance.EnvInstance._reset = _ignoring_render_later(instance.EnvInstance._reset)
instance.EnvInstance._step = _ignoring_render_later(instance.EnvInstance._step)


def make(**kwargs):
    return gymnasium.make("CartPole-v1", render_mode="rgb_array")
"""


async def _recording_frames(envhost: EnvHostProcess, nats_client: Any, open_link: Any,
                            **fields: Any) -> tuple[str, Any]:
    """A session recording frames, and its step link."""
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, record_frames=True, **fields)
    return session_id, await open_link(envhost.step_address, session_id)


def _frames(events: list[Any]) -> list[str]:
    return [(e.step.result.frame if e.HasField("step") else e.reset.frame).encoding for e in events]


async def test_the_last_frame_of_a_quiet_client_is_taken_and_recorded(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id, link = await _recording_frames(envhost, nats_client, open_link)
    await link.reset(seed=2)
    answers = [await link.step(0) for _ in range(2)]
    assert all(a.step.frame_later and not a.step.HasField("frame") for a in answers)
    events = await recorded_events(js, session_id, 3, timeout=10)  # no request, no stop: the timer takes it
    assert [e.WhichOneof("kind") for e in events] == ["reset", "step", "step"]
    assert _frames(events) == [PAINTED] * 3 and not events[-1].step.result.frame_later
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_frames_owed_go_before_an_unread_answer_and_before_the_stop(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id, link = await _recording_frames(envhost, nats_client, open_link)
    await link.reset(seed=4)
    await link.step(1)
    rendered = await link.request(env_pb.EnvRequest(render=env_pb.RenderRequest()))
    assert not rendered.later_frames  # the env host took the step's frame first
    await link.step(0)
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped
    events = await events_until_closed(js, session_id)
    assert [e.WhichOneof("kind") for e in events] == ["reset", "step", "step"]
    assert _frames(events) == [PAINTED] * 3
    # nothing moved in between: the recorded frame, painted from its observation, is the picture
    # `render` drew
    result = events[1].step.result
    painted = painted_array(result.frame, np.frombuffer(result.observation.tensor.data, np.float32))
    shown = simplejpeg.decode_jpeg(rendered.render.frame.data)
    assert np.abs(painted.astype(int) - shown.astype(int)).mean() < 3


async def test_an_instance_that_dies_owing_a_frame_leaves_its_steps_recorded(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id, link = await _recording_frames(envhost, nats_client, open_link)
    await link.reset(seed=6)
    for _ in range(3):
        await link.step(1)
    os.kill(envhost.instance_pid(session_id), signal.SIGKILL)
    events = await events_until_closed(js, session_id)  # up to CRASHED
    assert [e.WhichOneof("kind") for e in events] == ["reset", "step", "step", "step"]
    assert [e.seq for e in events] == [1, 2, 3, 4]
    # The frames that came are kept; the last one may have been taken before the kill or lost.
    assert _frames(events)[:3] == [PAINTED] * 3 and _frames(events)[3] in (PAINTED, "")


async def test_an_environment_server_that_renders_no_frames_later_gets_render(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any, tmp_path: Path) -> None:
    (tmp_path / "older_server_env.py").write_text(OLDER_SERVER_ENV)
    entry = control_pb.CatalogEntry(id="older", factory="older_server_env:make", path=str(tmp_path))
    session_id, link = await _recording_frames(envhost, nats_client, open_link, entry=entry)
    reset = await link.reset(seed=1)
    assert not reset.reset.frame_later  # it did not render later: the env host took the frame with render
    steps = [await link.step(0) for _ in range(2)]
    assert all(s.step.frame.encoding == "jpeg" for s in steps)  # asked render from then on
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped
    events = await events_until_closed(js, session_id)
    assert [e.WhichOneof("kind") for e in events] == ["reset", "step", "step"]
    assert _frames(events) == ["jpeg"] * 3
    assert [e.step.result.frame for e in events[1:]] == [s.step.frame for s in steps]


async def test_pong_screens_are_recorded_as_observation_frames(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id, link = await _recording_frames(envhost, nats_client, open_link, entry=PONG)
    await link.reset(seed=2)
    answers = [await link.step(0) for _ in range(3)]
    assert all(a.step.frame_later and not a.later_frames[0].frame.data for a in answers)
    events = await recorded_events(js, session_id, 4, timeout=10)
    assert _frames(events) == ["observation"] * 4  # the screens: the recorder encodes them
    await stop_session(nats_client, envhost.host_id, session_id)
