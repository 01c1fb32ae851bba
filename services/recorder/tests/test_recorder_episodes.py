"""Episode arrays (part -> npz) and part files, without NATS."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from platform_recorder.episodes import build_episode, write_npz_atomic
from platform_recorder.session_files import PartWriter, encode_record, read_part
from recorder_testkit import dict_obs, episode_events, reset_event, step_event
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
    write_npz_atomic(tmp_path / "e.npz", arrays)
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
    writer.sync()
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
    writer.sync()
    writer.close()
    assert [e.seq for e in read_part(path)] == [1, 2, 3, 4]
