"""A create's kwargs against its entry's declared options (`platform_broker.kwargs_check`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from platform_broker.catalog import load_catalog
from simulusion.session.v1.options_pb2 import SessionOptions
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
    ("doom-basic", {"tics": 2, "wad": 3, "doom_map": 1}),  # the platform's own (of another type: the env host's)
])
def test_good_kwargs_pass(env_id, kwargs):
    check_kwargs(BUILTINS.get(env_id), kwargs)


@pytest.mark.parametrize(("env_id", "kwargs", "allowed"), [
    ("pong", {"frameskip": 0}, "must be an integer from 1 to 60, not 0"),
    ("pong", {"frameskip": 2.5}, "must be an integer from 1 to 60, not 2.5"),
    ("pong", {"frameskip": 2.0}, "must be an integer from 1 to 60, not 2.0"),
    ("pong", {"frameskip": True}, "must be an integer from 1 to 60, not true"),
    ("pong", {"frameskip": "2"}, 'must be an integer from 1 to 60, not "2"'),
    ("pong", {"frameskip": None}, "must be an integer from 1 to 60, not null"),
    ("pong", {"repeat_action_probability": 1.5}, "must be a number from 0 to 1, not 1.5"),
    ("pong", {"repeat_action_probability": -0.1}, "must be a number from 0 to 1, not -0.1"),
    ("pong", {"repeat_action_probability": False}, "must be a number from 0 to 1, not false"),
    ("pong", {"repeat_action_probability": math.nan}, "must be a number from 0 to 1, not NaN"),
    ("pong", {"full_action_space": 1}, "must be true or false, not 1"),
    ("pong", {"full_action_space": "true"}, 'must be true or false, not "true"'),
    ("pong", {"mode": 2}, "must be one of 0, 1 (or null for the environment's own), not 2"),
    ("pong", {"mode": True}, "must be one of 0, 1 (or null for the environment's own), not true"),
    ("pong", {"mode": 1.0}, "not 1.0"),
    ("pong", {"max_episode_steps": 0}, "must be an integer from 1 to 10000000 (or null for the environment's own), not 0"),
    ("pong", {"endless": "yes"}, 'must be true or false, not "yes"'),
    ("cartpole", {"max_episode_steps": -1}, "must be an integer from 1 to 10000000, not -1"),
    ("dmc-walker-walk", {"camera_id": 2}, 'must be one of -1, 0, 1, "side", "back", not 2'),
    ("dmc-walker-walk", {"time_limit": 0}, "must be a number from 0.025 to 86400, not 0"),
    ("dmc-walker-walk", {"render_quality": "best"}, 'must be one of "fast", "full", not "best"'),
    ("dmc-walker-walk", {"substeps": 0}, "must be an integer from 1 to 1000, not 0"),
    # issue 30: past the maximum that keeps one decision under a few seconds
    ("dmc-walker-walk", {"substeps": 100_000_000}, "must be an integer from 1 to 1000, not 100000000"),
    ("menagerie-unitree-h1-stand", {"substeps": 1001}, "must be an integer from 1 to 1000, not 1001"),
    ("ant", {"frame_skip": 10**8}, "must be an integer from 1 to 1000, not 100000000"),
    ("pong", {"frameskip": 61}, "must be an integer from 1 to 60, not 61"),
    ("doom-basic", {"tics": 10**6}, "must be an integer from 1 to 105, not 1000000"),
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


@pytest.mark.parametrize(("env_id", "kwargs"), [
    ("ant", {"xml_file": "/etc/passwd"}),  # a path on the env host (issue 29)
    ("ant", {"frame_skip": 5, "xml_file": "/nonexistent.xml"}),
    ("ant", {"task": "Humanoid"}),  # the entry's own kwarg: fixed for its sessions
    ("pong", {"game": "breakout"}),
    ("menagerie-unitree-h1-stand", {"robot": "../../../etc"}),
    ("dmc-walker-walk", {"render_size": [120, 160]}),
    ("dmc-walker-walk", {"unknown_task_kwarg": {"any": "thing"}}),
    ("cartpole", {"render_mode": "human"}),
    ("pong", {"wad": "wad-1"}),  # Doom's own
    ("ant", {"doom_map": 3}),
])
def test_an_undeclared_kwarg_is_refused_naming_the_declared_ones(env_id, kwargs):
    entry = BUILTINS.get(env_id)
    name = next(n for n in kwargs if n not in {o.name for o in entry.options})
    with pytest.raises(InvalidArgumentError) as info:
        check_kwargs(entry, kwargs)
    error = info.value
    assert error.code == "invalid_argument" and error.field == f"kwargs.{name}"
    declared = ", ".join(option.name for option in entry.options)
    assert error.message == (f"kwargs.{name} is not an option of '{env_id}': it takes {declared} "
                             "(a catalog.toml entry takes other kwargs with free_kwargs = true)")
    assert "endless" in declared


def test_the_entrys_own_kwarg_at_its_own_value_passes():
    """A saved snapshot's kwargs are the instance's, the entry's own included (resume, compare)."""
    check_kwargs(BUILTINS.get("menagerie-unitree-h1-stand"), {"robot": "unitree_h1", "task": "stand", "substeps": 5})
    check_kwargs(BUILTINS.get("ant"), {"task": "Ant"})
    for other in ("unitree_g1", ["unitree_h1"], None):
        with pytest.raises(InvalidArgumentError, match="^kwargs.robot is not an option of "):
            check_kwargs(BUILTINS.get("menagerie-unitree-h1-stand"), {"robot": other})


def test_the_message_for_ant_names_its_options():
    with pytest.raises(InvalidArgumentError, match=r"^kwargs.xml_file is not an option of 'ant': it takes "
                       r"frame_skip, max_episode_steps, render_quality, .*, endless \(a catalog.toml"):
        check_kwargs(BUILTINS.get("ant"), {"xml_file": "/etc/passwd"})


def test_the_platforms_own_kwargs_are_not_refused():
    typed = SessionOptions(env_id="doom-basic", wad="wad-1", doom_map="MAP01", endless=True)
    check_kwargs(BUILTINS.get("doom-basic"), {}, typed)  # Doom's: the env host checks the WAD
    check_kwargs(BUILTINS.get("cartpole"), {}, SessionOptions(env_id="cartpole", endless=True))
    timeline = SessionOptions(env_id="cartpole")
    timeline.world_changes.SetInParent()
    check_kwargs(BUILTINS.get("cartpole"), {}, timeline)
    with pytest.raises(InvalidArgumentError, match="^kwargs.wad is not an option of 'ant'") as info:
        check_kwargs(BUILTINS.get("ant"), {}, SessionOptions(env_id="ant", wad="wad-1"))  # Doom's only
    assert info.value.field == "kwargs.wad"
    with pytest.raises(InvalidArgumentError, match="^kwargs.doom_map is not an option of 'pong'"):
        check_kwargs(BUILTINS.get("pong"), {}, SessionOptions(env_id="pong", doom_map="MAP01"))


def test_free_kwargs_pass_unchecked_but_declared_ones_are_still_checked(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text("""
[envs.mine]
factory = "my_envs:make"
free_kwargs = true
options.gain = { type = "float", default = 1.0, maximum = 2.0 }

[envs.closed]
factory = "my_envs:make"
""")
    catalog = load_catalog(path)
    mine, closed = catalog.get("mine"), catalog.get("closed")
    assert mine.free_kwargs and not closed.free_kwargs
    check_kwargs(mine, {"xml_file": "model.xml", "anything": [1, 2], "gain": 2, "wad": "w"},
                 SessionOptions(env_id="mine", wad="w", doom_map="MAP01"))
    with pytest.raises(InvalidArgumentError, match="^kwargs.gain of 'mine' must be a number <= 2"):
        check_kwargs(mine, {"anything": 1, "gain": 3})
    with pytest.raises(InvalidArgumentError) as info:
        check_kwargs(closed, {"anything": 1})
    assert info.value.message == ("kwargs.anything is not an option of 'closed': it takes endless "
                                  "(a catalog.toml entry takes other kwargs with free_kwargs = true)")


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
