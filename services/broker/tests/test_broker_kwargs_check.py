"""A create's kwargs against its entry's declared options (`platform_broker.kwargs_check`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from platform_broker.catalog import load_catalog
from platform_broker.errors import InvalidArgumentError
from platform_broker.kwargs_check import check_kwargs

BUILTINS = load_catalog(None)


@pytest.fixture(scope="module")
def custom(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("catalog")) / "catalog.toml"
    path.write_text("""
[envs.named]
factory = "my_envs:make"
options.player = { type = "string", default = "anon", help = "The player's name." }
options.gain = { type = "float", default = 1.0, maximum = 2.0 }
""")
    return load_catalog(path).get("named")


@pytest.mark.parametrize(("env_id", "kwargs"), [
    ("pong", {"frameskip": 2}),
    ("pong", {"frameskip": 1, "repeat_action_probability": 0, "full_action_space": True}),
    ("pong", {"repeat_action_probability": 1}),  # an int is a number
    ("pong", {"repeat_action_probability": 0.5, "mode": 1, "difficulty": 3}),
    ("pong", {"mode": None, "max_episode_steps": None}),  # null: the game's own
    ("pong", {"endless": True}),
    ("cartpole", {"max_episode_steps": 50, "sutton_barto_reward": True, "endless": False}),
    ("pendulum", {"g": 9.81}),
    ("ant", {"frame_skip": 10, "reset_noise_scale": 0.0, "terminate_when_unhealthy": False,
             "render_quality": "full"}),
    ("dmc-walker-walk", {"substeps": 5, "time_limit": 10, "camera_id": "back"}),
    ("dmc-walker-walk", {"camera_id": -1, "random": 7}),
    ("dmc-walker-walk", {"render_size": [120, 160], "unknown_task_kwarg": {"any": "thing"}}),  # undeclared
    ("pong", {"game": "breakout"}),  # undeclared: the entry's own kwarg, passed through
])
def test_good_kwargs_pass(env_id, kwargs):
    check_kwargs(BUILTINS.get(env_id), kwargs)


@pytest.mark.parametrize(("env_id", "kwargs", "allowed"), [
    ("pong", {"frameskip": 0}, "must be an integer >= 1, not 0"),
    ("pong", {"frameskip": 2.5}, "must be an integer >= 1, not 2.5"),
    ("pong", {"frameskip": 2.0}, "must be an integer >= 1, not 2.0"),
    ("pong", {"frameskip": True}, "must be an integer >= 1, not true"),
    ("pong", {"frameskip": "2"}, 'must be an integer >= 1, not "2"'),
    ("pong", {"frameskip": None}, "must be an integer >= 1, not null"),
    ("pong", {"repeat_action_probability": 1.5}, "must be a number from 0 to 1, not 1.5"),
    ("pong", {"repeat_action_probability": -0.1}, "must be a number from 0 to 1, not -0.1"),
    ("pong", {"repeat_action_probability": False}, "must be a number from 0 to 1, not false"),
    ("pong", {"repeat_action_probability": math.nan}, "must be a number from 0 to 1, not NaN"),
    ("pong", {"full_action_space": 1}, "must be true or false, not 1"),
    ("pong", {"full_action_space": "true"}, 'must be true or false, not "true"'),
    ("pong", {"mode": 2}, "must be one of 0, 1 (or null for the environment's own), not 2"),
    ("pong", {"mode": True}, "must be one of 0, 1 (or null for the environment's own), not true"),
    ("pong", {"mode": 1.0}, "not 1.0"),
    ("pong", {"max_episode_steps": 0}, "must be an integer >= 1 (or null for the environment's own), not 0"),
    ("pong", {"endless": "yes"}, 'must be true or false, not "yes"'),
    ("cartpole", {"max_episode_steps": -1}, "must be an integer >= 1, not -1"),
    ("dmc-walker-walk", {"camera_id": 2}, 'must be one of -1, 0, 1, "side", "back", not 2'),
    ("dmc-walker-walk", {"time_limit": 0}, "must be a number >= 0.025, not 0"),
    ("dmc-walker-walk", {"render_quality": "best"}, 'must be one of "fast", "full", not "best"'),
    ("dmc-walker-walk", {"substeps": 0}, "must be an integer >= 1, not 0"),
])
def test_bad_kwargs_name_the_option_the_value_and_what_is_allowed(env_id, kwargs, allowed):
    entry = BUILTINS.get(env_id)
    [name] = kwargs
    with pytest.raises(InvalidArgumentError) as info:
        check_kwargs(entry, kwargs)
    error = info.value
    assert error.code == "invalid_argument" and error.field == f"kwargs.{name}"
    assert error.message.startswith(f"kwargs.{name} of '{env_id}' ")
    assert allowed in error.message
    help_text = next(option.help for option in entry.options if option.name == name)
    assert error.message.endswith(f" ({help_text})")  # what the option does


def test_string_options_and_upper_bounds(custom):
    check_kwargs(custom, {"player": "ada", "gain": 2})
    with pytest.raises(InvalidArgumentError, match=r"^kwargs.player of 'named' must be a string, not 7 \(The player's name.\)$"):
        check_kwargs(custom, {"player": 7})
    with pytest.raises(InvalidArgumentError, match=r"^kwargs.gain of 'named' must be a number <= 2, not 2.5$") as info:
        check_kwargs(custom, {"gain": 2.5})  # no help: nothing after the value
    assert info.value.field == "kwargs.gain"


def test_a_long_value_is_cut_in_the_message(custom):
    with pytest.raises(InvalidArgumentError) as info:
        check_kwargs(custom, {"player": list(range(100))})
    assert "not [0, 1, 2, 3" in info.value.message and "...," not in info.value.message
    assert len(info.value.message) < 200
