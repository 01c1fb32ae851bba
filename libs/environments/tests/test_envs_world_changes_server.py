"""World changes in the environment server: the `world_changes` kwarg taken off before the
factory runs, checked against the live environment, ForRecording on reset, step, auto-reset and
hold answers, reveal in info, snapshots and exported states that replay exactly, and one
timeline count per sub-environment of a vector instance."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from platform_contracts.spaces import decode_value
from platform_contracts.values import dict_from_datamap
from platform_envs.world_change_timeline import WorldChangeTimeline
from platform_sdk.server.cli import build_instance, parse_args
from platform_sdk.server.errors import StartupError
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.vector import VectorInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

DMC = "platform_envs.adapters.dmc:make_env"


def _instance(timeline: list[dict[str, Any]] | None, *argv: str, **kwargs: Any) -> Any:
    if timeline is not None:
        kwargs["world_changes"] = timeline
    args = parse_args([*argv, "--kwargs", json.dumps(kwargs)])
    return build_instance(args)


def _ok(instance: Any, **command: Any) -> env_pb.EnvResponse:
    response = instance.handle(env_pb.EnvRequest(id=1, **command))
    assert not response.HasField("error"), response.error
    return response


def _reset(instance: Any, seed: int | None = 0) -> env_pb.ResetResponse:
    return _ok(instance, reset=env_pb.ResetRequest(seed=seed)).reset


def _tensor(values: Any) -> pb.Value:
    array = np.asarray(values, np.float64)
    return pb.Value(tensor=pb.Tensor(dtype="float64", shape=list(array.shape), data=array.tobytes()))


def _step(instance: Any, action: pb.Value, auto_reset: bool = False) -> env_pb.StepResponse:
    return _ok(instance, step=env_pb.StepRequest(action=action, auto_reset=auto_reset)).step


def _flat(value: pb.Value) -> np.ndarray:
    decoded = decode_value(value)
    if isinstance(decoded, dict):
        return np.concatenate([np.ravel(decoded[key]) for key in decoded])
    return np.asarray(decoded, np.float64).ravel()


def _applied(message: env_pb.ForRecording) -> list[dict[str, Any]]:
    return [json.loads(text) for text in message.world_changes_json]


CHEETAH = ("--gym-id", "HalfCheetah-v5")
ACTIONS = [_tensor(np.sin(np.arange(6) * (i + 1))) for i in range(40)]


def _trace(instance: Any, steps: range) -> list[tuple[bytes, float, list[str], bytes]]:
    """Each step's observation, reward, ForRecording changes and true observation, as bytes."""
    rows = []
    for i in steps:
        step = _step(instance, ACTIONS[i])
        record = step.for_recording
        rows.append((step.observation.SerializeToString(), step.reward, list(record.world_changes_json),
                     record.true_observation.SerializeToString()))
    return rows


def test_the_kwarg_is_the_platforms_and_a_session_without_it_is_not_wrapped() -> None:
    args = parse_args(["--gym-id", "CartPole-v1", "--kwargs", json.dumps(
        {"max_episode_steps": 9, "endless": True, "world_changes": [{"at": 1, "change": "sensor_noise", "std": 1}]})])
    assert args.kwargs == {"max_episode_steps": 9} and args.endless
    assert args.world_changes == [{"at": 1, "change": "sensor_noise", "std": 1}]  # as written: checked once, live
    plain = _instance(None, "--gym-id", "CartPole-v1")
    assert plain.timeline is None and not isinstance(plain.env, WorldChangeTimeline)
    assert not _reset(plain).HasField("for_recording")
    assert not _step(plain, pb.Value(discrete=1)).HasField("for_recording")
    assert _instance([], "--gym-id", "CartPole-v1").timeline is None


def test_a_malformed_timeline_fails_the_start_in_one_line() -> None:
    with pytest.raises(StartupError) as info:
        _instance([{"at": -1, "change": "sensor_noise"}], "--gym-id", "CartPole-v1")
    assert str(info.value) == ("CartPole-v1: world_changes[0].at: must be an integer >= 0 (the session step the "
                               "change comes before), not -1")
    with pytest.raises(StartupError, match=r"^CartPole-v1: world_changes: must be a list of changes"):
        build_instance(parse_args(["--gym-id", "CartPole-v1", "--kwargs", '{"world_changes": 3}']))


def test_a_vector_instance_checks_its_timeline_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from platform_envs import world_change_timeline

    calls: list[int] = []
    real = world_change_timeline.parse_timeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(world_change_timeline, "parse_timeline", counted)
    vector = _instance([{"at": 1, "change": "sensor_noise", "std": 1}], "--gym-id", "CartPole-v1", "--num-envs", "3")
    assert len(calls) == 1 and isinstance(vector, VectorInstance)
    timelines = [sub.timeline for sub in vector.subs]
    assert all(isinstance(t, WorldChangeTimeline) for t in timelines) and len({id(t) for t in timelines}) == 3


def test_a_timeline_the_live_environment_refuses_stops_the_start_in_one_line() -> None:
    kwargs = json.dumps({"world_changes": [{"at": 5, "change": "friction", "geom": "ice", "scale": 0.1}]})
    server = subprocess.run(
        [sys.executable, "-m", "platform_sdk", "--gym-id", "HalfCheetah-v5", "--kwargs", kwargs, "--listen",
         "127.0.0.1:0"], capture_output=True, text=True, timeout=120, check=False)
    assert server.returncode == 2 and server.stdout == ""
    line = server.stderr.strip().splitlines()[-1]
    assert "Traceback" not in server.stderr
    assert line.startswith("python -m platform_sdk: error: HalfCheetah-v5: world_changes[0].geom: no geom 'ice': "
                           "the geoms are floor, torso, head, ")
    with pytest.raises(StartupError, match=r"world_changes\[0\]\.change: mass needs a MuJoCo environment"):
        _instance([{"at": 0, "change": "mass", "body": "pole", "scale": 2}], "--gym-id", "CartPole-v1")


def test_answers_carry_what_they_applied_and_the_true_observation() -> None:
    timeline = [
        {"at": 0, "change": "mass", "body": "torso", "scale": 2.0},
        {"at": 2, "change": "sensor_offset", "offset": 0.5, "indices": [1], "reveal": True},
        {"at": 2, "change": "friction", "scale": 0.5},
        {"at": 4, "change": "sensor_offset", "offset": 0.0},
    ]
    instance = _instance(timeline, *CHEETAH)
    reset = _reset(instance)
    assert _applied(reset.for_recording) == [{**timeline[0], "index": 0, "session_step": 0}]
    assert not reset.for_recording.HasField("true_observation")
    assert not _step(instance, ACTIONS[0]).HasField("for_recording")
    _step(instance, ACTIONS[1])
    step = _step(instance, ACTIONS[2])  # step 2
    assert _applied(step.for_recording) == [{**timeline[1], "index": 1, "session_step": 2},
                                            {**timeline[2], "index": 2, "session_step": 2}]
    true, seen = _flat(step.for_recording.true_observation), _flat(step.observation)
    assert seen[1] == pytest.approx(true[1] + 0.5) and np.array_equal(np.delete(seen, 1), np.delete(true, 1))
    assert dict_from_datamap(step.info)["world_changes"] == [timeline[1]]  # revealed in that step only
    step = _step(instance, ACTIONS[3])
    assert "world_changes" not in dict_from_datamap(step.info)
    assert not step.for_recording.world_changes_json and step.for_recording.HasField("true_observation")
    step = _step(instance, ACTIONS[4])  # the offset is undone: nothing in force
    assert _applied(step.for_recording)[0]["index"] == 3 and not step.for_recording.HasField("true_observation")
    assert not _step(instance, ACTIONS[5]).HasField("for_recording")


def test_an_auto_reset_splits_the_steps_changes_from_the_resets() -> None:
    timeline = [
        {"at": 2, "change": "sensor_offset", "offset": 0.25, "reveal": True},
        {"at": 3, "change": "sensor_noise", "std": 0.01, "reveal": True},
    ]
    instance = _instance(timeline, "--gym-id", "CartPole-v1", max_episode_steps=3)
    _reset(instance)
    _step(instance, pb.Value(discrete=1))
    _step(instance, pb.Value(discrete=0))
    step = _step(instance, pb.Value(discrete=1), auto_reset=True)  # step 2 ends the episode
    ended = step.auto_reset
    assert ended.truncated
    assert [c["index"] for c in _applied(ended.final_for_recording)] == [0]
    assert dict_from_datamap(ended.final_info)["world_changes"] == [timeline[0]]
    assert _flat(ended.final_observation) == pytest.approx(_flat(ended.final_for_recording.true_observation) + 0.25)
    # the reset after it: 3 steps taken, so the noise is due there, with the new episode's true start
    assert [c["index"] for c in _applied(step.for_recording)] == [1]
    assert dict_from_datamap(step.info)["world_changes"] == [timeline[1]]
    assert step.for_recording.HasField("true_observation")
    assert not np.array_equal(_flat(step.observation), _flat(step.for_recording.true_observation))


def test_a_hold_carries_its_steps_changes_or_each_kept_step_its_own() -> None:
    timeline = [{"at": 1, "change": "mass", "body": "torso", "scale": 2.0},
                {"at": 3, "change": "sensor_offset", "offset": 1.0}]
    for keep in (False, True):
        instance = _instance(timeline, *CHEETAH)
        _reset(instance)
        hold = _ok(instance, hold=env_pb.HoldRequest(action=ACTIONS[0], steps=5, keep_steps=keep)).hold
        assert hold.steps == 5
        if not keep:
            assert [c["index"] for c in _applied(hold.for_recording)] == [0, 1]
            assert _flat(hold.observation) == pytest.approx(_flat(hold.for_recording.true_observation) + 1.0)
        else:
            assert not hold.HasField("for_recording")
            assert [[c["index"] for c in _applied(kept.for_recording)] for kept in hold.kept] == [[], [0], [], [1], []]
            assert [kept.for_recording.HasField("true_observation") for kept in hold.kept] == [False] * 3 + [True] * 2


@pytest.mark.parametrize("argv", [CHEETAH, ("--factory", DMC)], ids=["halfcheetah", "dmc-cheetah"])
def test_a_snapshot_restores_the_timeline_and_replays_exactly(argv) -> None:
    kwargs = {"domain": "cheetah", "task": "run"} if argv[0] == "--factory" else {}
    body = "torso"
    timeline = [
        {"at": 4, "change": "mass", "body": body, "scale": 3.0},
        {"at": 4, "change": "sensor_noise", "std": 0.02, "seed": 5},
        {"at": 9, "change": "motor_strength", "scale": 0.5},
        {"at": 12, "change": "friction", "body": body, "scale": 0.2},
    ]
    instance = _instance(timeline, *argv, **kwargs)
    _reset(instance, 4)
    _trace(instance, range(2))
    before = _ok(instance, snapshot=env_pb.SnapshotRequest()).snapshot.handle  # before any change
    first = _trace(instance, range(2, 7))
    during = _ok(instance, snapshot=env_pb.SnapshotRequest()).snapshot.handle  # with changes in force
    rest = _trace(instance, range(7, 16))
    assert [len(row[2]) for row in first] == [0, 0, 2, 0, 0] and first[2][3]
    _ok(instance, restore=env_pb.RestoreRequest(handle=before))
    assert _trace(instance, range(2, 16)) == first + rest
    _ok(instance, restore=env_pb.RestoreRequest(handle=during))
    assert _trace(instance, range(7, 16)) == rest


def test_an_exported_state_replays_exactly_in_a_new_instance() -> None:
    timeline = [{"at": 3, "change": "mass", "body": "torso", "scale": 0.5},
                {"at": 3, "change": "sensor_noise", "std": 0.1, "indices": [0, 5]},
                {"at": 8, "change": "position", "body": "torso", "offset": [0, 0, 0.1]}]
    instance = _instance(timeline, *CHEETAH)
    _reset(instance, 1)
    _trace(instance, range(5))
    state = _ok(instance, export_state=env_pb.ExportStateRequest()).export_state
    rest = _trace(instance, range(5, 15))
    fresh = _instance(timeline, *CHEETAH)
    _reset(fresh, 99)
    _ok(fresh, import_state=env_pb.ImportStateRequest(state=state.state, format=state.format))
    assert fresh.timeline is not None and fresh.timeline.session_steps == 5
    assert _trace(fresh, range(5, 15)) == rest
    other = _instance([{"at": 3, "change": "mass", "body": "torso", "scale": 2.0}], *CHEETAH)
    _reset(other)
    refused = other.handle(env_pb.EnvRequest(id=1, import_state=env_pb.ImportStateRequest(state=state.state)))
    assert refused.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert refused.error.message.endswith("it was saved with another world_changes timeline: use the same kwargs")


def test_each_sub_environment_counts_its_own_steps() -> None:
    vector = _instance([{"at": 2, "change": "sensor_offset", "offset": 1.0}], "--gym-id", "CartPole-v1",
                       "--num-envs", "2")
    assert isinstance(vector, VectorInstance)
    first, second = vector.subs
    assert isinstance(first, EnvInstance) and first.timeline is not second.timeline
    for sub in vector.subs:
        _reset(sub)
    for _ in range(3):
        last = _step(first, pb.Value(discrete=1))
    assert [c["session_step"] for c in _applied(last.for_recording)] == [2]
    assert not _step(second, pb.Value(discrete=1)).HasField("for_recording")
    assert (first.timeline.session_steps, second.timeline.session_steps) == (3, 1)


def test_a_menagerie_arm_takes_world_changes_and_replays_them_from_a_snapshot() -> None:
    """The robots are reached through env.unwrapped.model/.data (MENAGERIE_ROOT: the robots)."""
    robot = ("--factory", "platform_envs.robots:make_env")
    kwargs = {"robot": "franka_emika_panda", "task": "reach"}
    timeline = [{"at": 3, "change": "mass", "body": "hand", "scale": 5.0},
                {"at": 3, "change": "motor_strength", "scale": 0.5},
                {"at": 5, "change": "sensor_noise", "std": 0.01, "indices": [0, 1, 2]}]
    def trace(instance: Any, steps: range) -> list[bytes]:
        return [_step(instance, actions[i]).SerializeToString() for i in steps]

    plain = _instance(None, *robot, **kwargs)
    _reset(plain, 2)
    space = plain.env.action_space
    actions = [_tensor(space.low + (space.high - space.low) * (0.3 + 0.1 * (i % 4))) for i in range(10)]
    changed = _instance(timeline, *robot, **kwargs)
    _reset(changed, 2)
    before = trace(changed, range(3))
    assert before == trace(plain, range(3))
    snapshot = _ok(changed, snapshot=env_pb.SnapshotRequest()).snapshot.handle
    after = trace(changed, range(3, 10))
    differs = [a != b for a, b in zip(after, trace(plain, range(3, 10)), strict=True)]
    assert differs[0], "step 3 is the first under the change"
    _ok(changed, restore=env_pb.RestoreRequest(handle=snapshot))
    assert trace(changed, range(3, 10)) == after
