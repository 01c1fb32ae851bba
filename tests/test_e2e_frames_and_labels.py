"""Session settings for frames (JPEG quality, frames in recordings) and labelled observations."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import httpx
import numpy as np
import platform_sdk
import pytest
import simplejpeg
from platform_contracts.frames import jpeg_bytes
from platform_contracts.painted_frames import cartpole_frame, painted_jpeg
from platform_envs.adapters.dmc import make_env
from platform_sdk.labels import LabelError
from platform_testing.waiting import wait_for


def test_labels_come_with_the_spec_reset_and_step(platform_stack):
    local = make_env("walker", "walk")
    expected = local.get_observation_labels()
    local.close()
    with platform_sdk.connect("dmc-walker-walk", url=platform_stack.url) as env:
        assert env.get_observation_labels() == expected
        obs, _ = env.reset(seed=1)
        parts = env.labelled(obs)
        assert list(parts) == ["height", "orientations", "velocity"]
        for name in parts:
            np.testing.assert_array_equal(parts[name], np.ravel(obs[name]))
        assert sum(part.size for part in parts.values()) == gymnasium.spaces.flatdim(env.observation_space)

        as_json = {name: [start, stop] for name, start, stop in expected}
        sid, url = env.session_id, platform_stack.url
        assert httpx.get(f"{url}/v0/sessions/{sid}").json()["observation_labels"] == as_json
        reset = httpx.post(f"{url}/v0/sessions/{sid}/reset", json={"seed": 2}).json()
        assert reset["observation_labels"] == as_json
        step = httpx.post(f"{url}/v0/sessions/{sid}/step", json={"action": [0.0] * 6}).json()
        assert step["observation_labels"] == as_json


def test_an_env_without_labels_says_so(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        obs, _ = env.reset(seed=0)
        assert env.get_observation_labels() == []
        with pytest.raises(LabelError, match="names no parts of its observation"):
            env.labelled(obs)
        reset = httpx.post(f"{platform_stack.url}/v0/sessions/{env.session_id}/reset", json={}).json()
        assert reset["observation_labels"] is None


def test_jpeg_quality_is_a_session_setting(platform_stack):
    sizes = {}
    for quality in (10, 95):
        with platform_sdk.connect("pong", url=platform_stack.url, jpeg_quality=quality) as env:
            env.reset(seed=0)
            for _ in range(30):
                env.step(0)
            response = httpx.get(f"{platform_stack.url}/v0/sessions/{env.session_id}/render")
            assert response.headers["content-type"] == "image/jpeg"
            assert simplejpeg.decode_jpeg(response.content).shape == (210, 160, 3)
            sizes[quality] = len(response.content)
    assert sizes[10] * 2 < sizes[95], f"JPEG bytes by quality: {sizes}"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"env_id": "cartpole", "jpeg_quality": 0}, "jpeg_quality"),
        ({"env_id": "cartpole", "jpeg_quality": 101}, "jpeg_quality"),
        ({"env_id": "cartpole", "record_frames": True}, "record_frames keeps frames in the recording: it needs record=true"),
    ],
)
def test_bad_frame_settings_are_422(platform_stack, body, says):
    response = httpx.post(f"{platform_stack.url}/v0/sessions", json=body)
    assert response.status_code == 422, response.text
    assert says in response.text


def _closed_recording(folder: Path) -> dict:
    def closed_meta():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    return wait_for(closed_meta, what=f"recording {folder} to be closed")


def test_record_frames_keeps_a_jpeg_frame_per_step(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, record_frames=True,
                              jpeg_quality=50) as env:
        sid = env.session_id
        env.reset(seed=0)
        for _ in range(6):
            env.step(1)
    folder = Path(platform_stack.recordings) / sid
    meta = _closed_recording(folder)
    data = np.load(folder / meta["episodes"][0]["file"])
    frames = data["frames"]
    assert len(frames) == 7, "the reset's frame and one per step"
    decoded = [simplejpeg.decode_jpeg(bytes(f)) for f in frames]
    assert {d.shape for d in decoded} == {(400, 600, 3)}
    assert not np.array_equal(decoded[0], decoded[-1]), "the cart moved between the first and the last frame"


def test_recorded_atari_frames_are_the_jpegs_of_its_screens_encoded_by_the_recorder(platform_stack):
    """Pong's frame is its observation: the environment server sends no JPEG while the session
    steps; the recorder encodes each recorded screen, to the bytes the server's `render` gives."""
    with platform_sdk.connect("pong", url=platform_stack.url, record=True, record_frames=True,
                              jpeg_quality=60, auto_reset=True) as env:
        sid = env.session_id
        env.reset(seed=0)
        for _ in range(40):
            env.step(2)
        last_render = env.render()  # decoded from the JPEG the server encodes for `render`
    meta = _closed_recording(Path(platform_stack.recordings) / sid)
    data = np.load(Path(platform_stack.recordings) / sid / meta["episodes"][0]["file"])
    frames, observations = data["frames"], data["observations"]
    assert len(frames) == len(observations) == 41, "the reset's frame and one per step"
    assert [bytes(f) for f in frames] == [jpeg_bytes(o, 60) for o in observations]
    assert np.array_equal(simplejpeg.decode_jpeg(bytes(frames[-1])), last_render)


def test_recorded_cartpole_frames_are_painted_by_the_recorder_from_the_observations(platform_stack):
    """CartPole's picture follows from its observation: the environment server sends no picture
    while the session steps (`platform_sdk.server.painted`); the recorder paints each recorded
    observation and encodes it. The picture is the one the server's `render` draws."""
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, record_frames=True,
                              jpeg_quality=70) as env:
        sid = env.session_id
        env.reset(seed=2)
        for action in (1, 1, 0, 1, 1):
            env.step(action)
        last_render = env.render()  # the server's pygame picture, as JPEG, decoded
    meta = _closed_recording(Path(platform_stack.recordings) / sid)
    data = np.load(Path(platform_stack.recordings) / sid / meta["episodes"][0]["file"])
    frames, observations = data["frames"], data["observations"]
    assert len(frames) == len(observations) == 6, "the reset's frame and one per step"
    marker = cartpole_frame(0.5, 2.4, 70)
    assert [bytes(f) for f in frames] == [painted_jpeg(marker, o) for o in observations]
    last_recorded = simplejpeg.decode_jpeg(bytes(frames[-1]))
    assert last_recorded.shape == last_render.shape == (400, 600, 3)
    assert np.abs(last_recorded.astype(int) - last_render.astype(int)).mean() < 3
