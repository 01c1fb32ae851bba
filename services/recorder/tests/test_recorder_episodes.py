"""Episode arrays (part -> npz) and part files, without NATS."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from platform_contracts.json_values import space_to_json
from platform_contracts.values import tensor_from_array
from platform_recorder.storage.durable_files import SyncGroup
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.npz_files import encode_npz
from platform_recorder.writing.part_files import PartWriter, encode_record, read_part
from recorder_testkit import box_space, dict_obs, dict_spec, episode_events, reset_event, step_event
from simulusion.env.v1 import values_pb2 as pb

JPEG = b"\xff\xd8jpeg-bytes\x00\x00\xff\xd9"


def test_cartpole_episode_arrays_and_summary() -> None:
    events = episode_events("s1", first_seq=1, episode=0, steps=5)
    arrays, summary = build_episode(list(reversed(events)), "s1")  # order is restored by seq
    assert arrays["observations"].shape == (6, 4) and arrays["observations"].dtype == np.float32
    assert arrays["observations"][:, 0].tolist() == [1, 2, 3, 4, 5, 6]
    assert arrays["actions"].tolist() == [1, 0, 1, 0, 1]
    assert arrays["rewards"].dtype == np.float64 and arrays["rewards"].tolist() == [1, 2, 3, 4, 5]
    assert arrays["terminated"].tolist() == [False] * 4 + [True]
    assert arrays["truncated"].dtype == bool and not arrays["truncated"].any()
    assert arrays["seq"].dtype == np.uint64 and arrays["seq"].tolist() == [2, 3, 4, 5, 6]
    assert summary == {
        "length": 5,
        "return": 15.0,
        "start": "reset",
        "terminated": True,
        "truncated": False,
        "first_seq": 1,
        "last_seq": 6,
        "agent_keys": [],
    }


def test_agent_columns_nan_where_missing_and_non_numeric_skipped(caplog: pytest.LogCaptureFixture) -> None:
    events = [
        reset_event("s1", 1, 0),
        step_event("s1", 2, 0, 1, agent={"value": 0.5, "greedy": True, "note": "hi"}),
        step_event("s1", 3, 0, 2, agent={"greedy": False, "logp": np.array(-1.5)}),
        step_event("s1", 4, 0, 3, truncated=True),
    ]
    arrays, summary = build_episode(events, "session s1")
    np.testing.assert_array_equal(arrays["agent.value"], [0.5, np.nan, np.nan])
    np.testing.assert_array_equal(arrays["agent.greedy"], [1.0, 0.0, np.nan])
    np.testing.assert_array_equal(arrays["agent.logp"], [np.nan, -1.5, np.nan])
    assert "agent.note" not in arrays
    assert summary["agent_keys"] == ["greedy", "logp", "value"] and summary["truncated"] is True
    assert "'note' is not numeric" in caplog.text


def test_dict_and_tuple_values_become_one_array_per_key() -> None:
    events = episode_events("s1", 1, 0, 3, obs=dict_obs)
    for e in events[1:]:
        e.step.action.CopyFrom(
            pb.Value(
                tuple=pb.TupleValue(
                    values=[
                        pb.Value(discrete=e.seq),
                        pb.Value(tensor=pb.Tensor(dtype="float32", shape=[1], data=b"\0\0\x80?")),
                    ]
                )
            )
        )
    arrays, _ = build_episode(events)
    assert arrays["observations.position"].shape == (4, 2)
    assert arrays["observations.position"][:, 0].tolist() == [1, 2, 3, 4]
    assert arrays["observations.goal"].tolist() == [1, 2, 3, 4]
    assert arrays["actions.0"].tolist() == [2, 3, 4]
    assert arrays["actions.1"].tolist() == [[1.0]] * 3
    assert "observations" not in arrays and "actions" not in arrays


def test_frames_are_fixed_width_bytes_with_empty_rows(tmp_path: Path) -> None:
    events = [
        reset_event("s1", 1, 0, frame=JPEG),
        step_event("s1", 2, 0, 1),
        step_event("s1", 3, 0, 2, frame=JPEG + b"more\xff\xd9", terminated=True),
    ]
    arrays, _ = build_episode(events)
    (tmp_path / "e.npz").write_bytes(encode_npz(arrays))
    with np.load(tmp_path / "e.npz", allow_pickle=False) as data:
        frames = data["frames"]
    assert frames.dtype.kind == "S" and len(frames) == 3
    assert frames[0] == JPEG and frames[1] == b"" and frames[2] == JPEG + b"more\xff\xd9"
    assert not list(tmp_path.glob("*.tmp"))


def test_reset_only_episode_has_one_observation_and_no_steps() -> None:
    arrays, summary = build_episode([reset_event("s1", 7, 3, restore=True)])
    assert arrays["observations"].shape == (1, 4) and arrays["actions"].shape == (0,)
    assert summary["length"] == 0 and summary["start"] == "restore" and summary["first_seq"] == 7


def test_part_file_torn_tail_is_cut_and_appends_continue(tmp_path: Path) -> None:
    path = tmp_path / "episode-000000.part"
    writer = PartWriter(path)
    for event in episode_events("s1", 1, 0, 2, last=""):
        writer.append(event)
    group = SyncGroup()
    writer.sync(group)
    assert len(group) == 1  # written and created: the file and its folder entry are made durable
    group.commit()
    writer.close()
    whole = path.stat().st_size
    torn = encode_record(step_event("s1", 4, 0, 3))
    with open(path, "ab") as f:
        f.write(torn[: len(torn) // 2])  # a crash mid-append
    assert [e.seq for e in read_part(path)] == [1, 2, 3]
    assert path.stat().st_size > whole
    assert [e.seq for e in read_part(path, repair=True)] == [1, 2, 3]
    assert path.stat().st_size == whole
    writer = PartWriter(path)
    writer.append(step_event("s1", 4, 0, 3))
    group = SyncGroup()
    writer.sync(group)
    writer.sync(group)  # nothing new
    assert len(group) == 1
    group.commit()
    assert len(group) == 0
    writer.close()
    assert [e.seq for e in read_part(path)] == [1, 2, 3, 4]


def _spec(space: pb.Space, labels: list[tuple[str, int, int]]) -> dict:
    """The spec as recording.json keeps it."""
    return {
        "observation_space": space_to_json(space),
        "observation_labels": [{"name": n, "start": s, "stop": e} for n, s, e in labels],
    }


def _dmc_obs(seq: int) -> pb.Value:
    """A DeepMind Control-like observation: a Dict of float64 Boxes, keys sorted."""
    parts = {"height": [seq], "orientations": [seq, -seq, 0.5, 0.25], "velocity": [1.0, 2.0, seq]}
    return pb.Value(dict=pb.DictValue(entries=[
        pb.NamedValue(name=k, value=pb.Value(tensor=tensor_from_array(np.array(v, dtype=np.float64))))
        for k, v in parts.items()
    ]))


DMC_SPACE = pb.Space(dict=pb.DictSpace(entries=[
    pb.NamedSpace(name="height", space=box_space(np.ones(1))),
    pb.NamedSpace(name="orientations", space=box_space(np.ones(4))),
    pb.NamedSpace(name="velocity", space=box_space(np.ones(3))),
]))
DMC_LABELS = [("height", 0, 1), ("orientations", 1, 5), ("velocity", 5, 8)]


def test_state_columns_are_the_labelled_parts_of_each_observation(tmp_path: Path) -> None:
    events = episode_events("s1", 1, 0, 3, obs=_dmc_obs)
    arrays, _ = build_episode(events, "s1", spec=_spec(DMC_SPACE, DMC_LABELS))
    for name in ("height", "orientations", "velocity"):
        column = arrays[f"state.{name}"]
        assert column.dtype == np.float64 and column.shape == (4, arrays[f"observations.{name}"].shape[1])
        np.testing.assert_array_equal(column, arrays[f"observations.{name}"])
    (tmp_path / "e.npz").write_bytes(encode_npz(arrays))
    with np.load(tmp_path / "e.npz", allow_pickle=False) as data:
        assert data["state.velocity"][:, 2].tolist() == [1, 2, 3, 4]


def test_state_labels_may_cut_across_keys_and_take_any_json_form() -> None:
    events = episode_events("s1", 1, 0, 2, obs=_dmc_obs)
    for labels in ([["tail", 4, 7]], {"tail": [4, 7]}, [{"name": "tail", "start": 4, "stop": 7}]):
        spec = {"observation_space": space_to_json(DMC_SPACE), "observation_labels": labels}
        arrays, _ = build_episode(events, "s1", spec=spec)
        assert arrays["state.tail"].tolist() == [[0.25, 1.0, 2.0]] * 3  # orientations[3:], velocity[:2]


def test_state_of_a_box_observation_and_of_discrete_parts_one_hot() -> None:
    events = episode_events("s1", 1, 0, 2)  # CartPole-like Box(4,) float32
    spec = _spec(box_space(np.ones(4, np.float32)), [("cart", 0, 2), ("pole", 2, 4)])
    arrays, _ = build_episode(events, "s1", spec=spec)
    assert arrays["state.cart"].dtype == np.float64
    assert arrays["state.cart"].tolist() == [[1, 0.5], [2, 0.5], [3, 0.5]]
    assert arrays["state.pole"].tolist() == [[-0.5, 1.0]] * 3
    # DictNav: position Box(2,) then goal Discrete(5) one-hot, as gymnasium.spaces.flatten does
    events = episode_events("s1", 1, 0, 2, obs=dict_obs)
    spec = _spec(dict_spec().observation_space, [("position", 0, 2), ("goal", 2, 7)])
    arrays, _ = build_episode(events, "s1", spec=spec)
    assert arrays["state.position"].tolist() == [[1, -1], [2, -2], [3, -3]]
    assert arrays["state.goal"].tolist() == [np.eye(5)[seq % 5].tolist() for seq in (1, 2, 3)]


def test_no_labels_no_state_and_labels_that_do_not_fit_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    events = episode_events("s1", 1, 0, 2, obs=_dmc_obs)
    arrays, _ = build_episode(events, "s1", spec=_spec(DMC_SPACE, []))
    assert not [k for k in arrays if k.startswith("state.")]
    arrays, _ = build_episode(events, "s1")
    assert not [k for k in arrays if k.startswith("state.")]
    arrays, _ = build_episode(events, "session s1 episode 0", spec=_spec(DMC_SPACE, [*DMC_LABELS, ("past", 6, 9)]))
    assert "state.velocity" in arrays and "state.past" not in arrays
    assert "session s1 episode 0: observation label 'past' [6, 9) is outside the flat observation of size 8" in caplog.text
    arrays, _ = build_episode(events, "s1", spec=_spec(box_space(np.ones(4)), [("x", 0, 1)]))  # not this space
    assert "state.x" not in arrays and "no column 'observations'" in caplog.text
