"""Catalog options: the families' declarations in the built-in files, and those of catalog.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from platform_broker.catalog import load_catalog
from platform_broker.errors import ConfigError

BUILTINS = load_catalog(None)
FAMILIES = {"Classic control", "Atari", "Doom", "Gymnasium MuJoCo", "DeepMind Control", "MuJoCo Menagerie"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(text)
    return path


def options_of(entry) -> dict:
    return {option.name: option for option in entry.options}


def test_every_builtin_entry_has_its_family_and_endless_last():
    assert {entry.family for entry in BUILTINS} == FAMILIES
    assert BUILTINS.get("cartpole").family == "Classic control" and BUILTINS.get("pong").family == "Atari"
    assert BUILTINS.get("ant").family == "Gymnasium MuJoCo" and BUILTINS.get("freedoom-e1m1").family == "Doom"
    assert BUILTINS.get("dmc-cartpole-swingup").family == "DeepMind Control"
    for entry in BUILTINS:
        endless = entry.options[-1]
        assert (endless.name, endless.type, endless.default_json) == ("endless", "bool", "false"), entry.id
        assert "restarts in place" in endless.help
        assert all(option.help and "\n" not in option.help for option in entry.options), entry.id


@pytest.mark.parametrize(("env_id", "name", "default", "rate_help"), [
    ("pong", "frameskip", 4, "metadata.control_rate = 60 / frameskip"),
    ("doom-basic", "tics", 4, "metadata.control_rate = 35 / tics"),
    ("ant", "frame_skip", 5, "metadata.control_rate = 1 / (0.01 s x frame_skip)"),
    ("hopper", "frame_skip", 4, "metadata.control_rate = 1 / (0.002 s x frame_skip)"),
    ("dmc-walker-walk", "substeps", 10, "metadata.control_rate = 1 / (0.0025 s x substeps)"),
])
def test_the_control_rate_options(env_id, name, default, rate_help):
    option = options_of(BUILTINS.get(env_id))[name]
    assert option.type == "int" and json.loads(option.default_json) == default and option.minimum == 1
    assert option.HasField("maximum") and rate_help in option.help


def test_doom_comes_after_atari_with_its_options():
    from platform_broker.catalog import BUILTIN_ORDER, builtin_entries

    assert BUILTIN_ORDER.index("doom.toml") == BUILTIN_ORDER.index("atari.toml") + 1
    entries = builtin_entries()
    ids = list(entries)
    assert ids.index("freedoom-e1m1") > ids.index("doom-basic") > ids.index("pong")
    options = {option.name: option for option in entries["doom-basic"].options}
    assert list(options) == ["tics", "action_set", "labels", "depth", "max_episode_steps", "variables", "endless"]
    assert list(options["action_set"].choices_json) == ['"scenario"', '"full"']
    variables = options["variables"]
    assert (variables.type, variables.default_json) == ("list", "[]")
    assert {'"POSITION_X"', '"ANGLE"', '"HEALTH"'} <= set(variables.choices_json)


@pytest.mark.parametrize(("value", "fits"), [
    ([], True), (["POSITION_X", "POSITION_Y", "ANGLE"], True),
    (["POSITION_Q"], False), (["ANGLE", "ANGLE"], False), ("ANGLE", False), ([1], False), (None, False),
])
def test_a_list_option_takes_distinct_names_from_its_choices(value, fits):
    from platform_broker.kwargs_check import check_kwargs
    from platform_broker.errors import InvalidArgumentError

    entry = BUILTINS.get("doom-defend-the-center")
    if fits:
        check_kwargs(entry, {"variables": value})
        return
    with pytest.raises(InvalidArgumentError) as caught:
        check_kwargs(entry, {"variables": value})
    assert caught.value.field == "kwargs.variables"
    assert "must be a list of distinct strings, each one of KILLCOUNT, ITEMCOUNT," in str(caught.value)
    assert "in all)" in str(caught.value)  # the rest are counted, not listed


def test_a_list_options_choices_must_be_strings(tmp_path):
    bad = write(tmp_path, """
[options.names]
type = "list"
choices = [1, 2]
[envs.x]
gymnasium_id = "CartPole-v1"
""")
    with pytest.raises(ConfigError, match="a \"list\" option's 'choices' must be strings"):
        load_catalog(bad)


def test_builtin_option_types_ranges_and_choices():
    pong = options_of(BUILTINS.get("pong"))
    sticky = pong["repeat_action_probability"]
    assert (sticky.type, sticky.default_json, sticky.minimum, sticky.maximum) == ("float", "0.25", 0.0, 1.0)
    assert (pong["full_action_space"].type, pong["full_action_space"].default_json) == ("bool", "false")
    assert pong["max_episode_steps"].default_json == "null"  # Atari's limit depends on the frameskip
    assert (pong["mode"].type, list(pong["mode"].choices_json), pong["mode"].default_json) == ("choice", ["0", "1"], "null")
    assert list(options_of(BUILTINS.get("breakout"))["mode"].choices_json)[:3] == ["0", "4", "8"]
    cartpole = options_of(BUILTINS.get("cartpole"))
    assert list(cartpole) == ["max_episode_steps", "sutton_barto_reward", "endless"]
    assert cartpole["max_episode_steps"].default_json == "500"
    assert options_of(BUILTINS.get("mountaincar"))["max_episode_steps"].default_json == "200"
    walker = options_of(BUILTINS.get("dmc-walker-walk"))
    assert list(walker["camera_id"].choices_json) == ["-1", "0", "1", '"side"', '"back"']
    assert list(walker["render_quality"].choices_json) == ['"fast"', '"full"']
    assert walker["time_limit"].default_json == "25.0" and walker["time_limit"].minimum == 0.025
    assert options_of(BUILTINS.get("dmc-lqr-lqr-2-1"))["time_limit"].default_json == "null"  # lqr has none
    assert options_of(BUILTINS.get("pusher"))["max_episode_steps"].default_json == "100"


def test_a_files_family_and_options_and_an_entrys_own(tmp_path):
    catalog = load_catalog(write(tmp_path, """
family = "My lab"

[options.level]
type = "int"
default = 1
minimum = 1
maximum = 9
help = "The level to start at."

[options.speed]
type = "choice"
choices = ["slow", "fast"]
default = "slow"

[envs.maze]
gymnasium_id = "Maze-v0"
options.level = { default = 3, maximum = 5 }
options.name = { type = "string", default = "anon", help = "The player's name." }

[envs.race]
gymnasium_id = "Race-v0"
family = "Racing"
kwargs = { speed = "fast" }
"""))
    maze, race = catalog.get("maze"), catalog.get("race")
    assert maze.family == "My lab" and race.family == "Racing"
    level = options_of(maze)["level"]
    assert (level.type, level.default_json, level.minimum, level.maximum, level.help) == (
        "int", "3", 1.0, 5.0, "The level to start at.")  # the entry's keys over the file's
    assert [option.name for option in maze.options] == ["level", "speed", "name", "endless"]
    assert options_of(maze)["name"].type == "string" and options_of(maze)["name"].default_json == '"anon"'
    assert options_of(race)["level"].maximum == 9.0
    assert options_of(race)["speed"].default_json == '"fast"'  # the entry's kwargs are its defaults
    assert options_of(race)["speed"].help == ""


def test_catalog_toml_entries_default_to_the_custom_family(tmp_path):
    catalog = load_catalog(write(tmp_path, '[envs.lunar]\ngymnasium_id = "LunarLander-v3"\n'))
    lunar = catalog.get("lunar")
    assert lunar.family == "Custom" and [option.name for option in lunar.options] == ["endless"]
    replaced = load_catalog(write(tmp_path, '[envs.cartpole]\ngymnasium_id = "CartPole-v0"\n')).get("cartpole")
    assert replaced.family == "Custom" and [o.name for o in replaced.options] == ["endless"]  # a new entry whole


def test_an_entry_that_sets_endless_in_its_kwargs_defaults_to_it(tmp_path):
    catalog = load_catalog(write(tmp_path, '[envs.forever]\ngymnasium_id = "CartPole-v1"\nkwargs = { endless = true }\n'))
    assert catalog.get("forever").options[-1].default_json == "true"
    assert BUILTINS.get("cartpole").options[-1].default_json == "false"  # not shared between entries


ENTRY = '[envs.e]\ngymnasium_id = "X-v0"\n'


@pytest.mark.parametrize(("options", "problem"), [
    ('options.n = { default = 1 }', "'type' must be one of ['int', 'float', 'bool', 'string', 'choice', 'list'], got None"),
    ('options.n = { type = "integer" }', "got 'integer'"),
    ('options.n = { type = "bool", minimum = 0 }', "'minimum' only goes with type \"int\" or \"float\""),
    ('options.n = { type = "int", maximum = "9" }', "'maximum' must be a number"),
    ('options.n = { type = "int", minimum = 5, maximum = 1 }', "'minimum' is above 'maximum'"),
    ('options.n = { type = "choice" }', "a \"choice\" needs 'choices'"),
    ('options.n = { type = "choice", choices = [] }', "a \"choice\" needs 'choices'"),
    ('options.n = { type = "choice", choices = [1, 1] }', "lists a value twice"),
    ('options.n = { type = "choice", choices = [[1]] }', "each choice must be a string, number or boolean"),
    ('options.n = { type = "int", choices = [1, 2] }', "'choices' only goes with type \"choice\""),
    ('options.n = { type = "int", default = 0, minimum = 1 }', "'default' 0 is not allowed: it must be an integer >= 1"),
    ('options.n = { type = "int", default = 1.5 }', "'default' 1.5 is not allowed: it must be an integer"),
    ('options.n = { type = "bool", default = 1 }', "'default' 1 is not allowed: it must be true or false"),
    ('options.n = { type = "choice", choices = ["a"], default = "b" }', "it must be one of \"a\""),
    ('options.n = { type = "float", default = inf }', "'default' must be a JSON value"),
    ('options.n = { type = "int", help = """two\nlines""" }', "'help' must be a one-line string"),
    ('options.n = { type = "int", hint = "x" }', "unknown keys ['hint']"),
    ('options.n = 3', "option 'n' must be a table"),
    ('options.endless = { type = "bool" }', "'endless' is the platform's own option"),
    ('options = 3', "'options' must be a table"),
    ('kwargs = { n = "two" }\noptions.n = { type = "int" }', "kwargs.n = \"two\" is not allowed by its option"),
    ('family = ""', "'family' must not be empty"),
    ('family = 3', "'family' must be a string"),
])
def test_bad_option_declarations_name_the_entry(tmp_path, options, problem):
    path = write(tmp_path, ENTRY + options + "\n")
    with pytest.raises(ConfigError) as info:
        load_catalog(path)
    message = str(info.value)
    assert message.startswith(f"catalog {path}: entry 'e': ") and "\n" not in message
    assert problem in message


@pytest.mark.parametrize(("text", "problem"), [
    ('family = 3\n' + ENTRY, "'family' must be a non-empty string"),
    ('[options."bad name"]\ntype = "int"\n' + ENTRY, "option name 'bad name' must be a Python identifier"),
    ('[options.n]\ntype = "int"\nstep = 2\n' + ENTRY, "unknown keys ['step']"),
])
def test_bad_file_level_declarations_name_the_file(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_catalog(path)
    assert str(info.value).startswith(f"catalog {path}: ") and problem in str(info.value)


def test_a_file_option_is_checked_in_each_entry(tmp_path):
    path = write(tmp_path, '[options.n]\ntype = "choice"\n' + ENTRY)  # no choices: wrong for every entry
    with pytest.raises(ConfigError, match="entry 'e': option 'n': a \"choice\" needs 'choices'"):
        load_catalog(path)


def test_every_builtin_numeric_option_has_a_maximum():
    """Issue 30: `substeps: 1e8` burned a core on one decision. Every int and float option of every
    built-in entry is bounded above, and the cost-per-decision ones keep a decision short."""
    unbounded = [
        f"{entry.id}: {option.name}"
        for entry in BUILTINS
        for option in entry.options
        if option.type in ("int", "float") and not option.HasField("maximum")
    ]
    assert unbounded == []
    per_decision = {"substeps": 1000, "frame_skip": 1000, "frameskip": 60, "tics": 105}
    checked = 0
    for entry in BUILTINS:
        for option in entry.options:
            if option.name in per_decision:
                assert option.maximum <= per_decision[option.name], (entry.id, option.name)
                checked += 1
    assert checked > 80  # every MuJoCo, Atari and Doom entry has one
