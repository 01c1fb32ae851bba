"""A create's `world_changes` timeline against its catalog entry's `world` facts
(`platform_broker.world_timeline_check`, through `check_kwargs`, on the typed
`SessionOptions.world_changes` the kwarg is lifted into), the catalog's `world` tables, the create
refused with the field at fault before any process starts, and the timeline handed on parsed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from platform_broker.catalog import load_catalog
from platform_broker.errors import ConfigError, InvalidArgumentError
from platform_broker.kwargs_check import check_kwargs
from platform_broker.session_options import checked_options
from platform_contracts import subjects
from platform_contracts.world_changes import WorldFacts
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

BUILTINS = load_catalog(None)


def _check(entry: control_pb2.CatalogEntry, kwargs: dict[str, object]) -> SessionOptions:
    """What a create does: the kwargs' timeline lifted into its typed field, then checked."""
    options, rest = checked_options(SessionOptions(env_id=entry.id, kwargs_json=json.dumps(kwargs)))
    check_kwargs(entry, rest, options)
    return options


def _refused(env_id: str, timeline: object, entry: control_pb2.CatalogEntry | None = None) -> InvalidArgumentError:
    entry = entry or BUILTINS.get(env_id)
    with pytest.raises(InvalidArgumentError) as info:
        _check(entry, {"world_changes": timeline})
    error = info.value
    assert error.code == "invalid_argument" and "\n" not in error.message
    assert error.message.startswith(f"{error.field} of '{entry.id}': ")
    return error


@pytest.mark.parametrize(("env_id", "timeline"), [
    ("halfcheetah", [{"at": 100, "change": "mass", "body": "torso", "scale": 2.0},
                     {"at": 100, "change": "friction", "geom": "floor", "scale": 0.5},
                     {"at": 200, "change": "motor_strength", "actuator": "bthigh", "scale": 0.0},
                     {"at": 300, "change": "position", "body": "torso", "offset": [0, 0, 0.1], "reveal": True},
                     {"at": 400, "change": "sensor_noise", "std": 0.1, "indices": [0, 16], "seed": 3}]),
    ("dmc-walker-walk", [{"at": 0, "change": "mass", "body": "torso", "scale": 0.5},
                         {"at": 1, "change": "sensor_offset", "offset": 1.0}]),
    ("cartpole", [{"at": 10, "change": "sensor_offset", "offset": [0.1, -0.1], "indices": [0, 3]}]),
    ("pong", [{"at": 10, "change": "sensor_noise", "std": 5.0, "indices": [0, 100799]}]),
    ("cartpole", []),
    ("cartpole", None),
])
def test_good_timelines_pass(env_id, timeline) -> None:
    options = _check(BUILTINS.get(env_id), {"world_changes": timeline, "max_episode_steps": 10}
                     if env_id == "cartpole" else {"world_changes": timeline})
    assert options.HasField("world_changes") == (timeline is not None)  # null is not a list: left in the kwargs
    assert [(change.at, change.change, change.reveal) for change in options.world_changes.changes] == [
        (entry["at"], entry["change"], entry.get("reveal", False)) for entry in timeline or []]


@pytest.mark.parametrize(("env_id", "timeline", "field", "says"), [
    ("halfcheetah", {"at": 1}, "kwargs.world_changes", "must be a list of changes"),
    ("halfcheetah", [{"at": 1, "change": "mass", "body": "hand", "scale": 2.0}], "kwargs.world_changes[0].body",
     "no body 'hand': the bodies are torso, bthigh, bshin, bfoot, fthigh, fshin, ffoot"),
    ("halfcheetah", [{"at": 1, "change": "sensor_noise", "std": 1},
                     {"at": 1, "change": "friction", "geom": "ice", "scale": 2.0}], "kwargs.world_changes[1].geom",
     "no geom 'ice': the geoms are floor, torso, head,"),
    ("halfcheetah", [{"at": 1, "change": "motor_strength", "actuator": "knee", "scale": 2.0}],
     "kwargs.world_changes[0].actuator", "no actuator 'knee': the actuators are bthigh,"),
    ("halfcheetah", [{"at": 1, "change": "sensor_offset", "offset": 1.0, "indices": [17]}],
     "kwargs.world_changes[0].indices", "index 17 is out of range: the flat observation has 17 values"),
    ("halfcheetah", [{"at": 1.5, "change": "mass", "body": "torso", "scale": 2.0}], "kwargs.world_changes[0].at",
     "must be an integer >= 0"),
    ("halfcheetah", [{"at": 1, "change": "mass", "body": "torso", "scale": 101}], "kwargs.world_changes[0].scale",
     "0 < scale <= 100, not 101"),
    ("halfcheetah", [{"at": 1, "change": "wind", "speed": 3}], "kwargs.world_changes[0].change",
     'unknown kind "wind": the kinds are mass, friction, motor_strength, position, sensor_offset, sensor_noise'),
    ("halfcheetah", [{"at": 1, "change": "mass", "body": "torso", "scale": 2.0, "mass": 3}],
     "kwargs.world_changes[0].mass", "mass has no field 'mass'"),
    ("cartpole", [{"at": 1, "change": "mass", "body": "pole", "scale": 2.0}], "kwargs.world_changes[0].change",
     "mass needs a MuJoCo environment and this one is not: it allows sensor_noise, sensor_offset"),
    ("cartpole", [{"at": 1, "change": "sensor_noise", "std": 0.1, "indices": [4]}], "kwargs.world_changes[0].indices",
     "index 4 is out of range"),
    ("pong", [{"at": 1, "change": "friction", "scale": 2.0}], "kwargs.world_changes[0].change",
     "friction needs a MuJoCo environment"),
    ("dmc-cartpole-swingup", [{"at": 1, "change": "position", "body": "pole_2", "offset": [0, 0, 1]}],
     "kwargs.world_changes[0].body", "no body 'pole_2': the bodies are cart, pole_1"),
])
def test_a_bad_timeline_names_the_entry_and_field(env_id, timeline, field, says) -> None:
    error = _refused(env_id, timeline)
    assert error.field == field
    assert says in error.message, error.message


def test_other_kwargs_are_checked_first_and_the_timeline_is_never_an_option() -> None:
    entry = BUILTINS.get("pong")
    with pytest.raises(InvalidArgumentError) as info:
        _check(entry, {"frameskip": 0, "world_changes": [{"at": -1}]})
    assert info.value.field == "kwargs.frameskip"
    assert "world_changes" not in {option.name for option in entry.options}


@pytest.fixture(scope="module")
def custom(tmp_path_factory) -> Path:
    folder = Path(tmp_path_factory.mktemp("catalog"))
    path = folder / "catalog.toml"
    path.write_text("""
[envs.no-facts]
factory = "my_envs:make"

[envs.my-robot]
factory = "my_envs:make_robot"
world = { mujoco = true, bodies = ["base", "hand"], actuators = ["elbow"], geoms = ["floor"], observation_size = 9 }

[envs.my-grid]
factory = "my_envs:make_grid"
world = { sensors = false }
""")
    return path


def test_an_entry_without_facts_gets_the_form_checked_only(custom) -> None:
    entry = load_catalog(custom).get("no-facts")
    assert entry.world_json == ""
    _check(entry, {"world_changes": [{"at": 3, "change": "mass", "body": "anything", "scale": 2.0},
                                     {"at": 3, "change": "sensor_offset", "offset": 1.0, "indices": [999]}]})
    error = _refused("no-facts", [{"at": 3, "change": "mass", "body": "anything"}], entry)
    assert error.field == "kwargs.world_changes[0].scale"


def test_a_custom_entrys_world_table_is_its_facts(custom) -> None:
    catalog = load_catalog(custom)
    robot = catalog.get("my-robot")
    assert WorldFacts.from_json(robot.world_json) == WorldFacts(
        mujoco=True, bodies=("base", "hand"), actuators=("elbow",), geoms=("floor",), observation_size=9)
    _check(robot, {"world_changes": [{"at": 0, "change": "mass", "body": "hand", "scale": 2.0}]})
    assert _refused("my-robot", [{"at": 0, "change": "mass", "body": "foot", "scale": 2.0}], robot).message.endswith(
        "no body 'foot': the bodies are base, hand")
    grid = catalog.get("my-grid")
    assert "needs an observation that is a Box" in _refused(
        "my-grid", [{"at": 0, "change": "sensor_noise", "std": 1}], grid).message


def test_the_built_in_entries_carry_their_facts() -> None:
    facts = {entry.id: WorldFacts.from_json(entry.world_json) for entry in BUILTINS}
    assert facts["cartpole"] == WorldFacts(mujoco=False, observation_size=4)
    assert facts["pong"] == WorldFacts(mujoco=False)
    assert facts["halfcheetah"].mujoco and facts["halfcheetah"].observation_size == 17
    assert "pole_1" in facts["dmc-cartpole-swingup"].bodies


@pytest.mark.parametrize(("world", "problem"), [
    ("world = 3", "'world' must be a table"),
    ("world = { mujoco = 1 }", "'world': 'mujoco' must be true or false"),
    ("world = { bodies = \"torso\" }", "'world': 'bodies' must be a list of names"),
    ("world = { observation_size = -2 }", "'world': 'observation_size' must be an integer >= 0"),
    ("world = { joints = [] }", "'world': unknown keys ['joints']"),
    ('kwargs = { world_changes = [{ at = 1, change = "mass", body = "hand", scale = 2.0 }] }\n'
     "world = { mujoco = true, bodies = [\"base\"] }",
     "kwargs.world_changes[0].body: no body 'hand': the bodies are base"),
    ('kwargs = { world_changes = 3 }', "kwargs.world_changes: must be a list of changes"),
])
def test_bad_world_tables_and_entry_timelines_stop_the_catalog(tmp_path, world, problem) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(f'[envs.bad]\nfactory = "m:f"\n{world}\n')
    with pytest.raises(ConfigError) as info:
        load_catalog(path)
    message = str(info.value)
    assert message.startswith(f"catalog {path}: entry 'bad': ") and problem in message and "\n" not in message


async def test_a_create_with_a_bad_timeline_is_refused_before_anything_starts(broker, envhost, ask) -> None:
    host = await envhost()
    await broker()
    kwargs = {"world_changes": [{"at": 5000, "change": "mass", "body": "torso", "scale": 2.0},
                                {"at": 9000, "change": "mass", "body": "hand", "scale": 1.0}]}
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id="halfcheetah", kwargs_json=json.dumps(kwargs)))
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.world_changes[1].body")
    assert reply.error.message.startswith("kwargs.world_changes[1].body of 'halfcheetah': no body 'hand'")
    assert host.starts == []
    kwargs["world_changes"][1]["body"] = "torso"
    request.options.kwargs_json = json.dumps(kwargs)
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    handed = host.starts[-1].options  # the timeline in its typed field, parsed; the kwargs without it
    assert json.loads(handed.kwargs_json) == {}
    assert [json.loads(change.entry_json) for change in handed.world_changes.changes] == kwargs["world_changes"]
    assert [(change.at, change.change) for change in handed.world_changes.changes] == [(5000, "mass"), (9000, "mass")]


async def test_a_timeline_already_lifted_by_the_gateway_is_checked_the_same(broker, envhost, ask) -> None:
    host = await envhost()
    await broker()
    options = SessionOptions(env_id="halfcheetah", kwargs_json="{}")
    options.world_changes.changes.add(entry_json='{"at": 3, "change": "mass", "body": "hand", "scale": 2}')
    request = control_pb2.CreateSessionRequest(options=options)
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.world_changes[0].body")
    request.options.world_changes.changes[0].entry_json = '{"at": 3, "change": "mass", "body": "torso", "scale": 2}'
    request.options.world_changes.changes.add(entry_json='{"at": 7, "change": "sensor_offset", "offset": 1.0, '
                                                         '"reveal": true}')
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    for handed in (reply.session.options, host.starts[-1].options):  # stored and handed on parsed
        assert [(c.at, c.change, c.reveal) for c in handed.world_changes.changes] == [
            (3, "mass", False), (7, "sensor_offset", True)]
        assert handed.world_changes.changes[0].entry_json == '{"at": 3, "change": "mass", "body": "torso", "scale": 2}'
    request.options.world_changes.changes[1].entry_json = "{nope"
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.world_changes[1]")
