"""`platform_contracts.world_changes`: parsing and checking a timeline, the facts, and the docs table."""

from __future__ import annotations

import ast
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import platform_contracts.limits  # noqa: F401 (the test reads its source)
import pytest
from platform_contracts.world_changes import (
    KINDS,
    MAX_CHANGES,
    MUJOCO_KINDS,
    SENSOR_KINDS,
    WorldChange,
    WorldChangeError,
    WorldFacts,
    kinds_markdown,
    parse_timeline,
    timeline_json,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "world-changes.md"
CHEETAH = WorldFacts(
    mujoco=True,
    bodies=("torso", "bthigh", "fthigh"),
    actuators=("bthigh", "fthigh"),
    geoms=("floor", "torso", "head"),
    observation_size=17,
)
CARTPOLE = WorldFacts(mujoco=False, observation_size=4)
DISCRETE = WorldFacts(mujoco=False, observation_size=None, sensors=False)


def _error(timeline, facts=None) -> WorldChangeError:
    with pytest.raises(WorldChangeError) as info:
        parse_timeline(timeline, facts)
    return info.value


def test_a_good_timeline_parses_with_defaults_and_keeps_entries_as_given() -> None:
    timeline = [
        {"at": 5000, "change": "mass", "body": "torso", "scale": 2},
        {"at": 5000, "change": "sensor_noise", "std": 0.01, "indices": [0, 1, 2], "reveal": True},
        {"at": 0, "change": "friction", "scale": 0.5},
        {"at": 1, "change": "friction", "geom": "floor", "scale": 100},
        {"at": 2, "change": "motor_strength", "scale": 0},
        {"at": 3, "change": "position", "body": "torso", "offset": [0, 0, 0.5]},
        {"at": 4, "change": "sensor_offset", "offset": [1, 2], "indices": [3, 16]},
        {"at": 4, "change": "sensor_offset", "offset": -1.5},
    ]
    changes = parse_timeline(timeline, CHEETAH)
    assert [c.index for c in changes] == list(range(8))
    mass, noise = changes[0], changes[1]
    assert (mass.at, mass.change, mass.reveal, dict(mass.values)) == (5000, "mass", False, {"body": "torso", "scale": 2.0})
    assert isinstance(mass.values["scale"], float)
    assert dict(noise.values) == {"indices": (0, 1, 2), "std": 0.01, "seed": 0} and noise.reveal
    assert noise.entry == timeline[1]  # as given: no defaults added
    assert changes[6].values["offset"] == (1.0, 2.0)
    assert changes[5].values["offset"] == (0.0, 0.0, 0.5)
    assert noise.applied(5000) == {**timeline[1], "index": 1, "session_step": 5000}
    assert json.loads(timeline_json(changes)) == timeline
    assert parse_timeline(timeline) == changes  # without facts: the same entries
    assert parse_timeline(None) == () and parse_timeline([]) == ()


def test_the_entry_as_given_is_a_copy() -> None:
    entry = {"at": 1, "change": "sensor_offset", "offset": [1.0], "indices": [0]}
    [change] = parse_timeline([entry])
    entry["indices"].append(1)
    assert change.entry["indices"] == [0]


@pytest.mark.parametrize(("timeline", "path", "says"), [
    ({"at": 1}, "world_changes", "must be a list of changes like ["),
    ("[]", "world_changes", "must be a list of changes"),
    ([[1]], "world_changes[0]", "must be an object like {"),
    ([{1: "x"}], "world_changes[0]", "must be an object"),
    ([{"at": 1}], "world_changes[0].change", "missing: the kind of change, one of mass, friction, motor_strength, "
     "position, sensor_offset, sensor_noise"),
    ([{"at": 1, "change": "gravity"}], "world_changes[0].change", 'unknown kind "gravity": the kinds are mass, '),
    ([{"at": 1, "change": 3}], "world_changes[0].change", "unknown kind 3"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": 2, "bdy": 1}], "world_changes[0].bdy",
     "mass has no field 'bdy': its fields are at, change, body, scale, reveal"),
    ([{"change": "mass", "body": "torso", "scale": 2}], "world_changes[0].at", "missing: the session step"),
    ([{"at": -1, "change": "mass", "body": "torso", "scale": 2}], "world_changes[0].at", "must be an integer >= 0"),
    ([{"at": 2.0, "change": "mass", "body": "torso", "scale": 2}], "world_changes[0].at", "not 2.0"),
    ([{"at": True, "change": "mass", "body": "torso", "scale": 2}], "world_changes[0].at", "not true"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": 2, "reveal": 1}], "world_changes[0].reveal",
     "must be true or false, not 1"),
    ([{"at": 1, "change": "mass", "scale": 2}], "world_changes[0].body", "missing: mass needs body, a body's name"),
    ([{"at": 1, "change": "mass", "body": "torso"}], "world_changes[0].scale", "missing: mass needs scale"),
    ([{"at": 1, "change": "mass", "body": 3, "scale": 2}], "world_changes[0].body", "must be the name of a body"),
    ([{"at": 1, "change": "mass", "body": "", "scale": 2}], "world_changes[0].body", "must be the name of a body"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": 0}], "world_changes[0].scale",
     "must be a number, 0 < scale <= 100, not 0"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": 100.5}], "world_changes[0].scale", "not 100.5"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": math.nan}], "world_changes[0].scale", "not NaN"),
    ([{"at": 1, "change": "mass", "body": "torso", "scale": "2"}], "world_changes[0].scale", 'not "2"'),
    ([{"at": 1, "change": "friction", "body": "torso", "geom": "head", "scale": 2}], "world_changes[0].geom",
     "friction takes body or geom, not both"),
    ([{"at": 1, "change": "friction", "geom": 7, "scale": 2}], "world_changes[0].geom", "must be the name of a geom"),
    ([{"at": 1, "change": "motor_strength", "scale": -0.1}], "world_changes[0].scale",
     "must be a number, 0 <= scale <= 100, not -0.1"),
    ([{"at": 1, "change": "motor_strength", "actuator": None, "scale": 1}], "world_changes[0].actuator",
     "must be the name of an actuator (a string), not null"),
    ([{"at": 1, "change": "position", "body": "torso"}], "world_changes[0].offset", "missing: position needs offset"),
    ([{"at": 1, "change": "position", "body": "torso", "offset": [0, 0]}], "world_changes[0].offset",
     "must be [dx, dy, dz] in metres, each from -10 to 10, not [0, 0]"),
    ([{"at": 1, "change": "position", "body": "torso", "offset": [0, 0, 10.5]}], "world_changes[0].offset",
     "not [0, 0, 10.5]"),
    ([{"at": 1, "change": "position", "body": "torso", "offset": 1}], "world_changes[0].offset", "not 1"),
    ([{"at": 1, "change": "sensor_offset"}], "world_changes[0].offset", "missing: sensor_offset needs offset"),
    ([{"at": 1, "change": "sensor_offset", "offset": []}], "world_changes[0].offset",
     "must be a number, or a non-empty list of numbers"),
    ([{"at": 1, "change": "sensor_offset", "offset": [1, "a"]}], "world_changes[0].offset", "non-empty list"),
    ([{"at": 1, "change": "sensor_offset", "offset": [1, 2], "indices": [0]}], "world_changes[0].offset",
     "has 2 numbers but indices has 1"),
    ([{"at": 1, "change": "sensor_offset", "offset": 1, "indices": []}], "world_changes[0].indices",
     "must be a non-empty list of integers >= 0"),
    ([{"at": 1, "change": "sensor_offset", "offset": 1, "indices": [0, -1]}], "world_changes[0].indices", "not [0, -1]"),
    ([{"at": 1, "change": "sensor_offset", "offset": 1, "indices": [0.0]}], "world_changes[0].indices", "not [0.0]"),
    ([{"at": 1, "change": "sensor_offset", "offset": 1, "indices": 0}], "world_changes[0].indices", "not 0"),
    ([{"at": 1, "change": "sensor_offset", "offset": 1, "indices": [1, 1]}], "world_changes[0].indices",
     "must not repeat an index: [1, 1]"),
    ([{"at": 1, "change": "sensor_noise"}], "world_changes[0].std", "missing: sensor_noise needs std"),
    ([{"at": 1, "change": "sensor_noise", "std": -1}], "world_changes[0].std", "must be a number, 0 <= std <= 100"),
    ([{"at": 1, "change": "sensor_noise", "std": 101}], "world_changes[0].std", "not 101"),
    ([{"at": 1, "change": "sensor_noise", "std": 1, "seed": -2}], "world_changes[0].seed", "must be an integer >= 0"),
    ([{"at": 1, "change": "sensor_noise", "std": 1, "seed": 1.5}], "world_changes[0].seed", "not 1.5"),
    ([{"at": 1, "change": "sensor_noise", "std": 1, "offset": 1}], "world_changes[0].offset",
     "sensor_noise has no field 'offset': its fields are at, change, indices, std, seed, reveal"),
])
def test_a_bad_entry_names_its_field_and_what_is_allowed(timeline, path, says) -> None:
    error = _error(timeline)
    assert error.path == path
    assert says in error.problem, error.problem
    assert str(error) == f"{path}: {error.problem}" and "\n" not in str(error)


def test_the_first_bad_entry_in_list_order_is_named() -> None:
    good = {"at": 1, "change": "sensor_noise", "std": 1}
    error = _error([good, good, {"at": 1, "change": "sensor_noise", "std": -1}, {"at": "x"}])
    assert error.path == "world_changes[2].std"


def test_too_many_changes_are_refused() -> None:
    error = _error([{"at": 1, "change": "sensor_noise", "std": 1}] * (MAX_CHANGES + 1))
    assert (error.path, error.problem) == ("world_changes", f"has {MAX_CHANGES + 1} changes: at most {MAX_CHANGES}")


@pytest.mark.parametrize(("entry", "path", "says"), [
    ({"change": "mass", "body": "hand", "scale": 2}, "world_changes[0].body",
     "no body 'hand': the bodies are torso, bthigh, fthigh"),
    ({"change": "friction", "body": "hand", "scale": 2}, "world_changes[0].body", "no body 'hand'"),
    ({"change": "friction", "geom": "wheel", "scale": 2}, "world_changes[0].geom",
     "no geom 'wheel': the geoms are floor, torso, head"),
    ({"change": "motor_strength", "actuator": "elbow", "scale": 2}, "world_changes[0].actuator",
     "no actuator 'elbow': the actuators are bthigh, fthigh"),
    ({"change": "position", "body": "world", "offset": [0, 0, 1]}, "world_changes[0].body", "no body 'world'"),
    ({"change": "sensor_offset", "offset": 1, "indices": [3, 17]}, "world_changes[0].indices",
     "index 17 is out of range: the flat observation has 17 values (indices 0 to 16)"),
    ({"change": "sensor_noise", "std": 1, "indices": [20]}, "world_changes[0].indices", "index 20 is out of range"),
    ({"change": "sensor_offset", "offset": [1, 2]}, "world_changes[0].offset",
     "has 2 numbers but without indices it must have one per value of the flat observation, 17"),
])
def test_facts_refuse_what_the_environment_lacks(entry, path, says) -> None:
    timeline = [{"at": 3, **entry}]
    parse_timeline(timeline)  # the form alone is fine
    error = _error(timeline, CHEETAH)
    assert error.path == path and says in error.problem, error.problem


@pytest.mark.parametrize("kind", sorted(MUJOCO_KINDS))
def test_mujoco_kinds_are_refused_where_there_is_no_mujoco(kind) -> None:
    fields = {"body": "pole", "scale": 2.0} if kind != "position" else {"body": "pole", "offset": [0, 0, 1]}
    if kind == "motor_strength":
        fields = {"scale": 2.0}
    error = _error([{"at": 0, "change": kind, **fields}], CARTPOLE)
    assert error.path == "world_changes[0].change"
    assert error.problem == (f"{kind} needs a MuJoCo environment and this one is not: "
                             "it allows sensor_noise, sensor_offset")


@pytest.mark.parametrize("kind", sorted(SENSOR_KINDS))
def test_sensor_kinds_need_a_box_observation(kind) -> None:
    entry = {"at": 0, "change": kind, "offset": 1.0} if kind == "sensor_offset" else {"at": 0, "change": kind, "std": 1}
    parse_timeline([entry], CARTPOLE)
    error = _error([entry], DISCRETE)
    assert error.path == "world_changes[0].change" and "needs an observation that is a Box or a Dict of Boxes" in str(error)
    assert "it allows no kinds" in _error([{"at": 0, "change": "mass", "body": "b", "scale": 1}], DISCRETE).problem


def test_long_name_lists_are_cut() -> None:
    facts = WorldFacts(mujoco=True, bodies=tuple(f"link{i}" for i in range(60)))
    problem = _error([{"at": 0, "change": "mass", "body": "hand", "scale": 2}], facts).problem
    assert problem.endswith("link39, ... (60 in all)") and "link40" not in problem


def test_unknown_observation_size_leaves_indices_to_the_instance() -> None:
    facts = WorldFacts(mujoco=False, observation_size=None)
    [change] = parse_timeline([{"at": 0, "change": "sensor_offset", "offset": [1.0, 2.0], "indices": [5000, 9]}], facts)
    assert change.values["indices"] == (5000, 9)
    [change] = parse_timeline([{"at": 0, "change": "sensor_offset", "offset": [1.0, 2.0]}], facts)
    assert change.values["offset"] == (1.0, 2.0)


def test_facts_round_trip_through_json_and_refuse_bad_tables() -> None:
    for facts in (CHEETAH, CARTPOLE, DISCRETE, WorldFacts()):
        assert WorldFacts.from_json(facts.to_json()) == facts
    assert json.loads(CARTPOLE.to_json()) == {"mujoco": False, "bodies": [], "actuators": [], "geoms": [],
                                              "observation_size": 4}
    assert WorldFacts.from_json("") is None
    assert WorldFacts.from_mapping({"mujoco": False}) == WorldFacts()
    for raw, says in (
        ({"mujoco": 1}, "'mujoco' must be true or false"),
        ({"sensors": "no"}, "'sensors' must be true or false"),
        ({"bodies": "torso"}, "'bodies' must be a list of names"),
        ({"geoms": ["a", ""]}, "'geoms' must be a list of names"),
        ({"actuators": [1]}, "'actuators' must be a list of names"),
        ({"observation_size": -1}, "'observation_size' must be an integer >= 0"),
        ({"observation_size": True}, "'observation_size' must be an integer >= 0"),
        ({"observation_size": 4.0}, "'observation_size' must be an integer >= 0"),
        ({"joints": []}, "unknown keys ['joints']; allowed: mujoco, bodies, actuators, geoms, observation_size, sensors"),
    ):
        with pytest.raises(ValueError, match=re.escape(says)):
            WorldFacts.from_mapping(raw)
    with pytest.raises(ValueError, match="must be a JSON object"):
        WorldFacts.from_json("[1]")


def test_the_doc_holds_the_generated_kinds_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert kinds_markdown() in text, "docs/world-changes.md is stale: paste kinds_markdown()'s output into it"
    for kind in KINDS.values():
        assert f"### `{kind.name}`" in text
        for name in kind.field_names:
            assert f"| `{name}` |" in text


def test_the_module_imports_only_the_standard_library() -> None:
    """The broker imports it: no numpy, gymnasium or mujoco at import (nor protobuf: the names of
    the reserved kwargs it takes from `platform_contracts.session_kwargs` are plain strings, and its
    limits come from `platform_contracts.limits`; both import only the standard library too)."""
    def imported_by(module: str) -> set[str]:
        source = Path(sys.modules[module].__file__ or "").read_text(encoding="utf-8")
        return {
            alias.name
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
        }

    ours = {"platform_contracts.session_kwargs", "platform_contracts.limits"}
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    imported = imported_by(WorldChange.__module__)
    assert {name.split(".")[0] for name in imported - ours} <= allowed, imported
    for module in ours:  # session_kwargs names SessionOptions for type checking only (the run below checks)
        assert {name.split(".")[0] for name in imported_by(module) - ours} <= allowed | {"simulusion"}, module
    code = ("import sys, platform_contracts.world_changes; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'numpy', 'gymnasium', 'mujoco', 'google', "
            "'simulusion'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
