"""Doom through ViZDoom in process (`platform_envs.doom`): entries, spaces, variables, labels,
depth and the action sets. Real vizdoom throughout."""

from __future__ import annotations

import sys
import tomllib

import numpy as np
import pytest
from builtin_catalog import builtin_catalog_file
from doom_required import require_vizdoom
from gymnasium.utils.env_checker import check_env
from platform_envs.doom import SCENARIOS, DoomError, make_env
from platform_envs.doom.scenarios import LEVEL_VARIABLES

require_vizdoom()

DOOM_TOML = builtin_catalog_file("doom.toml")
FULL_NAMES = [
    "MOVE_FORWARD+TURN_LEFT+ATTACK", "MOVE_FORWARD+TURN_LEFT", "MOVE_FORWARD+TURN_RIGHT+ATTACK",
    "MOVE_FORWARD+TURN_RIGHT", "MOVE_FORWARD+ATTACK", "MOVE_FORWARD",
    "MOVE_BACKWARD+TURN_LEFT+ATTACK", "MOVE_BACKWARD+TURN_LEFT", "MOVE_BACKWARD+TURN_RIGHT+ATTACK",
    "MOVE_BACKWARD+TURN_RIGHT", "MOVE_BACKWARD+ATTACK", "MOVE_BACKWARD",
    "TURN_LEFT+ATTACK", "TURN_LEFT", "TURN_RIGHT+ATTACK", "TURN_RIGHT", "ATTACK", "NOOP",
    "USE", "MOVE_LEFT", "MOVE_RIGHT", "SELECT_NEXT_WEAPON", "SELECT_PREV_WEAPON",
]
FORWARD, TURN_LEFT, NOOP = FULL_NAMES.index("MOVE_FORWARD"), FULL_NAMES.index("TURN_LEFT"), FULL_NAMES.index("NOOP")


def test_every_catalog_entry_builds_resets_steps_and_renders() -> None:
    entries = tomllib.loads(DOOM_TOML.read_text())["envs"]
    assert list(entries) == [
        "doom-basic", "doom-defend-the-center", "doom-health-gathering", "doom-deathmatch", "freedoom-e1m1",
    ]
    for env_id, entry in entries.items():
        assert entry["factory"] == "platform_envs.doom:make_env" and entry["description"], env_id
        env = make_env(**entry["kwargs"])
        obs, info = env.reset(seed=1)
        assert set(obs) == {"screen", "variables"} and obs["screen"].shape == (240, 320, 3), env_id
        assert obs in env.observation_space, env_id
        assert len(info["variable_names"]) == obs["variables"].shape[0] > 0, env_id
        for action in range(env.action_space.n):
            obs, reward, terminated, truncated, _ = env.step(action)
            assert obs in env.observation_space and np.isfinite(reward), (env_id, action)
            if terminated or truncated:
                env.reset()
        frame = env.render()
        assert frame is not None and frame.shape == (240, 320, 3) and frame.std() > 0, env_id
        assert np.array_equal(frame, obs["screen"]) or terminated or truncated, env_id
        assert env.metadata["control_rate"] == 35 / 4 and env.metadata["render_fps"] == 35 / 4
        assert len(env.metadata["action_names"]) == env.action_space.n, env_id
        env.close()


def test_gymnasiums_env_checker_passes() -> None:
    env = make_env("defend_the_center", labels=True, depth=True)
    check_env(env, skip_render_check=False)
    env.close()


def test_tics_set_the_control_rate_and_how_far_a_step_goes() -> None:
    angles = {}
    for tics in (1, 7):
        env = make_env("defend_the_center", tics=tics, variables=["ANGLE"])
        assert env.metadata["control_rate"] == 35 / tics and env.metadata["tics"] == tics
        env.reset(seed=0)
        obs, *_ = env.step(env.metadata["action_names"].index("TURN_LEFT"))
        angles[tics] = float(obs["variables"][-1])
        env.close()
    assert 0 < 5 * angles[1] < angles[7]  # a turn speeds up over its first tics


def test_scenario_menus_are_noop_then_the_scenarios_own_buttons() -> None:
    expected = {
        "basic": ["NOOP", "MOVE_LEFT", "MOVE_RIGHT", "ATTACK"],
        "defend_the_center": ["NOOP", "TURN_LEFT", "TURN_RIGHT", "ATTACK"],
        "health_gathering": ["NOOP", "TURN_LEFT", "TURN_RIGHT", "MOVE_FORWARD"],
    }
    for scenario, names in expected.items():
        env = make_env(scenario)
        assert env.metadata["action_names"] == names and env.action_space.n == len(names)
        env.close()
    deathmatch = make_env("deathmatch")  # no SPEED, STRAFE nor delta buttons: alone they do nothing
    names = deathmatch.metadata["action_names"]
    assert names[:3] == ["NOOP", "ATTACK", "MOVE_RIGHT"] and "SELECT_WEAPON6" in names
    assert not {"SPEED", "STRAFE"} & set(names) and not any(n.endswith("_DELTA") for n in names)
    deathmatch.close()


def test_basic_strafes_left_and_right_where_defend_the_center_turns() -> None:
    basic = make_env("basic", variables=["POSITION_Y", "ANGLE"])
    start = basic.reset(seed=0)[0]["variables"]
    moved = basic.step(1)[0]["variables"]  # MOVE_LEFT
    assert moved[-2] > start[-2] and moved[-1] == start[-1]
    basic.close()
    center = make_env("defend_the_center", variables=["POSITION_Y", "ANGLE"])
    start = center.reset(seed=0)[0]["variables"]
    turned = center.step(1)[0]["variables"]  # TURN_LEFT
    assert turned[-2] == start[-2] and turned[-1] != start[-1]
    center.close()


@pytest.mark.parametrize("scenario", ["basic", "health_gathering"])
def test_the_full_action_set_is_the_same_23_actions_in_order(scenario: str) -> None:
    env = make_env(scenario, action_set="full", variables=["POSITION_X", "POSITION_Y", "ANGLE"])
    assert env.metadata["action_names"] == FULL_NAMES and env.action_space.n == 23
    start = env.reset(seed=0)[0]["variables"][-3:]
    after_noop = env.step(NOOP)[0]["variables"][-3:]
    forward = env.step(FORWARD)[0]["variables"][-3:]
    turned = env.step(TURN_LEFT)[0]["variables"][-3:]
    assert np.array_equal(after_noop, start)
    # facing east (angle 0) at the start: forward is +x, whether or not the scenario has the button
    assert forward[0] > after_noop[0] and forward[2] == after_noop[2]
    assert turned[2] != forward[2]
    env.close()


def test_whole_levels_report_the_level_variables_and_extra_ones_follow() -> None:
    env = make_env("freedoom-e1m1", variables=["POSITION_X", "position_y", "ANGLE", "HEALTH"])
    obs, info = env.reset(seed=0)
    assert info["variable_names"] == [*LEVEL_VARIABLES, "POSITION_X", "POSITION_Y", "ANGLE"]
    assert env.variable_names == tuple(info["variable_names"]) == tuple(env.metadata["variable_names"])
    health, armor, ammo, kills = obs["variables"][:4]
    assert (health, armor, kills) == (100, 0, 0) and ammo > 0
    assert obs["variables"].dtype == np.float32
    env.close()
    basic = make_env("basic")
    assert basic.reset(seed=0)[1]["variable_names"] == ["AMMO2"]
    basic.close()


def test_an_unknown_variable_is_a_one_line_error_naming_the_valid_ones() -> None:
    with pytest.raises(DoomError) as caught:
        make_env("basic", variables=["POSITION_W"])
    message = str(caught.value)
    assert "\n" not in message and "'POSITION_W'" in message
    assert "POSITION_X" in message and "ANGLE" in message and "KILLCOUNT" in message


def test_labels_and_depth_add_their_maps_and_the_objects_in_view() -> None:
    env = make_env("basic", labels=True, depth=True)
    assert set(env.observation_space.spaces) == {"screen", "variables", "labels", "depth"}
    obs, info = env.reset(seed=0)
    assert obs["labels"].shape == obs["depth"].shape == (240, 320)
    assert obs["labels"].dtype == obs["depth"].dtype == np.uint8
    names = {label["name"] for label in info["labels"]}
    assert "Cacodemon" in names
    monster = next(label for label in info["labels"] if label["name"] == "Cacodemon")
    assert set(monster) == {
        "value", "id", "name", "x", "y", "width", "height",
        "object_position_x", "object_position_y", "object_position_z",
    }
    box = obs["labels"][monster["y"]:monster["y"] + monster["height"], monster["x"]:monster["x"] + monster["width"]]
    assert (box == monster["value"]).any()  # the map marks the object's pixels with its value
    assert monster["object_position_x"] == 0.0  # basic's monster stands on the wall at x = 0
    assert len(np.unique(obs["depth"])) > 10  # near floor to far wall
    _, _, _, _, step_info = env.step(0)
    assert [label["name"] for label in step_info["labels"]] == [label["name"] for label in info["labels"]]
    env.close()
    plain = make_env("basic")
    obs, info = plain.reset(seed=0)
    assert set(obs) == {"screen", "variables"} and "labels" not in info
    plain.close()


def test_bad_settings_are_refused() -> None:
    for kwargs, message in (
        ({"scenario": "doom2"}, "unknown Doom scenario 'doom2'"),
        ({"tics": 0}, "tics must be an int >= 1"),
        ({"action_set": "all"}, "action_set must be 'scenario' or 'full'"),
        ({"max_episode_steps": 0}, "max_episode_steps must be"),
        ({"render_mode": "human"}, "render_mode must be 'rgb_array' or None"),
        ({"labels": "yes"}, "labels must be true or false"),
    ):
        with pytest.raises(DoomError, match=message):
            make_env(**{"scenario": "basic", **kwargs})
    env = make_env("defend-the-center")  # dashes or underscores
    assert env.scenario == "defend_the_center"
    with pytest.raises(DoomError, match="reset first"):
        env.step(0)
    env.reset(seed=0)
    for action in (4, -1, 1.5, "x", True):
        with pytest.raises(DoomError, match=r"action .* is not in Discrete\(4\)"):
            env.step(action)
    env.close()
    with pytest.raises(DoomError, match="closed"):
        env.reset()
    assert set(SCENARIOS) == {"basic", "defend_the_center", "health_gathering", "deathmatch", "freedoom-e1m1"}


def test_missing_vizdoom_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vizdoom", None)  # what `import vizdoom` does when it is absent
    with pytest.raises(DoomError, match=r"pip install 'platform-envs\[doom\]'"):
        make_env("basic")
