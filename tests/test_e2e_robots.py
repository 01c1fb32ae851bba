"""Menagerie robots through the platform: control rates, hand control, pick and place played by
its teacher and what the recording keeps of it (teacher.action/valid, info.is_success as bools,
state.<name> of the labelled observation). Needs the robots: MENAGERIE_ROOT (the root conftest
points it at ../shared/menagerie when that copy is there)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import platform_sdk
import pytest
from platform_testing.waiting import wait_for

pytestmark = pytest.mark.timeout(180)


def _closed_recording(folder: Path) -> dict:
    def closed_meta():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    return wait_for(closed_meta, what=f"recording {folder} to be closed", timeout=30)


def test_substeps_set_the_control_rate_the_spec_reports(platform_stack):
    with platform_sdk.connect("menagerie-franka-emika-panda-reach", url=platform_stack.url,
                              kwargs={"substeps": 100}) as env:
        assert env.metadata["control_rate"] == pytest.approx(5.0)
        assert env.metadata["substeps"] == 100
        assert env.metadata["action_names"][:2] == ["actuator1", "actuator2"]
    with platform_sdk.connect("menagerie-unitree-h1-walk", url=platform_stack.url) as env:
        assert env.metadata["control_rate"] == pytest.approx(50.0)
        assert len(env.metadata["action_names"]) == env.action_space.shape[0] == 19
        obs, _ = env.reset(seed=3)
        parts = env.labelled(obs)
        assert {"torso_height", "joint_angles", "command"} <= set(parts)


def test_reach_by_hand_moves_the_hand_by_at_most_one_hand_step(platform_stack):
    with platform_sdk.connect("menagerie-franka-emika-panda-reach-by-hand", url=platform_stack.url,
                              kwargs={"hand_step": 0.02, "hand_levels": 5}) as env:
        assert env.action_space.nvec.tolist() == [5, 5, 5, 2]
        assert env.metadata["action_names"] == ["hand_x", "hand_y", "hand_z", "gripper"]
        obs, _ = env.reset(seed=0)
        before = env.labelled(obs)["hand_position"]
        for _ in range(3):  # settle on the target after each move
            obs, *_ = env.step([4, 2, 2, 0])
        after = env.labelled(obs)["hand_position"]
        moved = after - before
        assert 0.005 < moved[0] <= 0.02 * 3 + 1e-3, f"the hand moved {moved} for three +x moves"
        assert np.all(np.abs(moved[1:]) < 0.005), f"y and z should stay: {moved}"


def test_pick_and_place_played_by_its_teacher_is_recorded_with_its_suggestions(platform_stack):
    with platform_sdk.connect("menagerie-franka-emika-panda-pick-place", url=platform_stack.url,
                              record=True) as env:
        sid = env.session_id
        assert env.metadata["control_rate"] == pytest.approx(5.0)
        obs, info = env.reset(seed=1)
        suggested, successes = [], []
        for _ in range(200):
            action = info["teacher_action"]
            suggested.append(action)
            obs, _, terminated, truncated, info = env.step(action)
            successes.append(info["is_success"])
            if terminated or truncated:
                break
        assert terminated and info["is_success"], "the teacher places the block on seed 1"
        last_block = env.labelled(obs)["block_position"]
    meta = _closed_recording(Path(platform_stack.recordings) / sid)
    episode = np.load(Path(platform_stack.recordings) / sid / meta["episodes"][0]["file"])
    steps = len(suggested)
    # row t is the suggestion that came with observation t, for action t: here the action played
    assert episode["teacher.action"].shape == (steps, 4)
    np.testing.assert_array_equal(episode["teacher.action"], np.array(suggested))
    np.testing.assert_array_equal(episode["actions"], np.array(suggested))
    assert episode["teacher.valid"].all()
    success = episode["info.is_success"]
    assert success.dtype == np.bool_ and success.shape == (steps,)
    assert success.tolist() == successes and success[-1] and not success[:-1].any()
    assert episode["state.hand_position"].shape == (steps + 1, 3)
    np.testing.assert_array_equal(episode["state.block_position"][-1], last_block)
    assert meta["episodes"][0]["is_success"] is True


def test_the_overviews_world_changes_on_the_panda(platform_stack):
    """The overview's example, sooner: the hand's mass doubles and the first three entries of the
    observation get noisy at step 3, the mass is back at step 6 (revealed to the agent)."""
    timeline = [
        {"at": 3, "change": "mass", "body": "hand", "scale": 2.0},
        {"at": 3, "change": "sensor_noise", "std": 0.01, "indices": [0, 1, 2]},
        {"at": 6, "change": "mass", "body": "hand", "scale": 1.0, "reveal": True},
    ]
    with platform_sdk.connect("menagerie-franka-emika-panda-reach", url=platform_stack.url,
                              kwargs={"substeps": 100, "world_changes": timeline}) as env:
        env.reset(seed=0)
        revealed = []
        for _ in range(8):
            *_, info = env.step((env.action_space.low + env.action_space.high) / 2)
            revealed.append(info.get("world_changes"))
        assert revealed[:6] == [None] * 6 and revealed[7] is None
        assert revealed[6] == [timeline[2]], "the revealed change is in the info of step 6 only"
        told = env.world_changes()
    assert told["timeline"] == timeline
    assert [(c["index"], c["session_step"]) for c in told["applied"]] == [(0, 3), (1, 3), (2, 6)]


def test_a_timeline_naming_a_body_the_robot_lacks_is_422_before_anything_starts(platform_stack):
    import httpx

    response = httpx.post(f"{platform_stack.url}/v0/sessions", json={
        "env_id": "menagerie-franka-emika-panda-reach",
        "kwargs": {"world_changes": [{"at": 10, "change": "mass", "body": "gripper_of_doom", "scale": 2.0}]},
    })
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["field"] == "kwargs.world_changes[0].body"
    assert "gripper_of_doom" in body["detail"] and "hand" in body["detail"], body
