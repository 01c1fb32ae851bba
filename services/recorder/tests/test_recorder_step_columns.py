"""`agent.<name>` and `info.is_success` columns: episode arrays, and meta.json through the writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_contracts.values import datamap_from_dict, tensor_from_array
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.npz_files import encode_npz
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import load_episode, read_meta, reset_event, started, step_event, subject_of
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import values_pb2 as pb


def with_info(event: events_pb2.StepEvent, info: dict[str, Any]) -> events_pb2.StepEvent:
    event.step.result.info.CopyFrom(datamap_from_dict(info))
    return event


def test_agent_numbers_booleans_and_lists_keep_their_shapes() -> None:
    events = [
        reset_event("s1", 1, 0),
        step_event("s1", 2, 0, 1, agent={"confidence": 0.82, "refused": False, "probs": [0.2, 0.8]}),
        step_event("s1", 3, 0, 2, agent={"refused": 1, "compute_s": 0.013}),
        step_event("s1", 4, 0, 3, agent={"probs": np.array([0.6, 0.4]), "refused": True}, terminated=True),
    ]
    arrays, summary = build_episode(events, "session s1")
    assert summary["agent_keys"] == ["compute_s", "confidence", "probs", "refused"]
    for key in ("agent.confidence", "agent.refused", "agent.probs", "agent.compute_s"):
        assert arrays[key].dtype == np.float64, key
    np.testing.assert_array_equal(arrays["agent.confidence"], [0.82, np.nan, np.nan])
    np.testing.assert_array_equal(arrays["agent.refused"], [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(arrays["agent.compute_s"], [np.nan, 0.013, np.nan])
    assert arrays["agent.probs"].shape == (3, 2)
    np.testing.assert_array_equal(arrays["agent.probs"], [[0.2, 0.8], [np.nan, np.nan], [0.6, 0.4]])


def test_agent_values_of_another_shape_or_not_numeric_are_left_out(caplog: pytest.LogCaptureFixture) -> None:
    events = [
        reset_event("s1", 1, 0),
        step_event("s1", 2, 0, 1, agent={"probs": [0.1, 0.9], "mixed": [1, "a"], "empty": []}),
        step_event("s1", 3, 0, 2, agent={"probs": [0.1, 0.2, 0.7]}),
        step_event("s1", 4, 0, 3, agent={"probs": 0.5}),
        step_event("s1", 5, 0, 4, agent={"probs": [0.3, 0.7]}),
    ]
    arrays, summary = build_episode(events, "session s1")
    np.testing.assert_array_equal(arrays["agent.probs"], [[0.1, 0.9], [np.nan] * 2, [np.nan] * 2, [0.3, 0.7]])
    assert summary["agent_keys"] == ["probs"]
    assert "'probs' changed shape from (2,) to (3,)" in caplog.text
    assert "'mixed' is not numeric (list)" in caplog.text and "'empty' is not numeric" in caplog.text


def test_is_success_is_one_bool_per_step_and_the_episode_outcome_its_last() -> None:
    events = [
        reset_event("s1", 1, 0),
        with_info(step_event("s1", 2, 0, 1), {"is_success": False, "x": 1}),
        with_info(step_event("s1", 3, 0, 2), {"is_success": np.array([1.0])}),
        with_info(step_event("s1", 4, 0, 3), {"is_success": 0.0}),
        with_info(step_event("s1", 5, 0, 4, terminated=True), {"is_success": True}),
    ]
    arrays, summary = build_episode(events, "session s1")
    assert arrays["info.is_success"].dtype == np.bool_
    assert arrays["info.is_success"].tolist() == [False, True, False, True]
    assert summary["is_success"] is True
    arrays, summary = build_episode(events[:4], "session s1")  # ends on a step that was not a success
    assert summary["is_success"] is False and arrays["info.is_success"].tolist() == [False, True, False]


def test_an_episode_where_some_steps_did_not_report_is_success_has_no_column(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="platform_recorder.writing.step_columns")
    events = [
        reset_event("s1", 1, 0),
        with_info(step_event("s1", 2, 0, 1), {"is_success": False}),
        step_event("s1", 3, 0, 2),
        with_info(step_event("s1", 4, 0, 3), {"is_success": "yes"}),  # not a number: not reported
        with_info(step_event("s1", 5, 0, 4, terminated=True), {"is_success": True}),
    ]
    arrays, summary = build_episode(events, "session s1")
    assert "info.is_success" not in arrays
    assert summary["is_success"] is True  # the outcome is still the last step's
    assert "session s1: 2 of 4 steps did not report info['is_success']" in caplog.text
    arrays, summary = build_episode(events[:3], "session s1")  # the last step has none
    assert "is_success" not in summary and "info.is_success" not in arrays


def test_no_is_success_no_column() -> None:
    events = [reset_event("s1", 1, 0), with_info(step_event("s1", 2, 0, 1, terminated=True), {"x": 1})]
    arrays, summary = build_episode(events)
    assert "info.is_success" not in arrays and "is_success" not in summary


def test_recording_lists_agent_keys_across_episodes(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    ep0 = [reset_event("s1", 1, 0), step_event("s1", 2, 0, 1, agent={"confidence": 0.5}, terminated=True)]
    ep1 = [
        reset_event("s1", 3, 1),
        with_info(step_event("s1", 4, 1, 1, agent={"refused": True}, truncated=True), {"is_success": 1}),
    ]
    writer.process([(subject_of(e), e.SerializeToString()) for e in [started("s1"), *ep0, *ep1]])
    meta = read_meta(tmp_path, "s1")
    assert meta.agent_keys == ["confidence", "refused"]
    assert "is_success" not in meta.episodes[0] and meta.episodes[1]["is_success"] is True
    data = load_episode(tmp_path, "s1", 1)
    assert data["agent.refused"].tolist() == [1.0] and data["info.is_success"].tolist() == [True]
    assert data["info.is_success"].dtype == np.bool_
    assert "agent.confidence" not in data


def with_reset_info(event: events_pb2.StepEvent, info: dict[str, Any]) -> events_pb2.StepEvent:
    event.reset.info.CopyFrom(datamap_from_dict(info))
    return event


def test_teacher_action_row_t_is_the_suggestion_that_came_with_observation_t(caplog: pytest.LogCaptureFixture) -> None:
    events = [
        with_reset_info(reset_event("s1", 1, 0), {"teacher_action": 1}),
        with_info(step_event("s1", 2, 0, 1, action=1), {"teacher_action": 0}),
        step_event("s1", 3, 0, 2, action=0),
        with_info(step_event("s1", 4, 0, 3), {"teacher_action": 1.0}),  # an integral float fits
        with_info(step_event("s1", 5, 0, 4), {"teacher_action": 0.5}),  # not a Discrete value
        # the final observation's suggestion: no action follows it, so it is not kept
        with_info(step_event("s1", 6, 0, 5, terminated=True), {"teacher_action": np.int64(0)}),
    ]
    arrays, _ = build_episode(events, "session s1 episode 0")
    assert arrays["teacher.action"].dtype == arrays["actions"].dtype == np.int64
    assert arrays["teacher.action"].tolist() == [1, 0, 0, 1, 0]
    assert arrays["teacher.valid"].dtype == bool
    assert arrays["teacher.valid"].tolist() == [True, True, False, True, False]
    assert (
        "session s1 episode 0: info 'teacher_action' of step row 4 does not fit actions: "
        "0.5 is not a value of the integer action" in caplog.text
    )


def test_teacher_action_of_box_and_dict_actions(caplog: pytest.LogCaptureFixture) -> None:
    box = [reset_event("s1", 1, 0), step_event("s1", 2, 0, 1), step_event("s1", 3, 0, 2), step_event("s1", 4, 0, 3)]
    for e in box[1:]:
        e.step.action.CopyFrom(pb.Value(tensor=tensor_from_array(np.array([0.5, -0.5], np.float32))))
    with_info(box[1], {"teacher_action": [0.25, 0.75]})
    with_info(box[2], {"teacher_action": np.array([1.0, 2.0, 3.0])})  # another shape: left out
    arrays, _ = build_episode(box, "s1")
    assert arrays["teacher.action"].dtype == np.float32 and arrays["teacher.action"].shape == (3, 2)
    assert arrays["teacher.action"].tolist() == [[0, 0], [0.25, 0.75], [0, 0]]
    assert arrays["teacher.valid"].tolist() == [False, True, False]
    assert "its shape (3,) is not the action's (2,)" in caplog.text

    dict_steps = [reset_event("s1", 1, 0), step_event("s1", 2, 0, 1), step_event("s1", 3, 0, 2)]
    for e in dict_steps[1:]:
        e.step.action.CopyFrom(pb.Value(dict=pb.DictValue(entries=[
            pb.NamedValue(name="aim", value=pb.Value(tensor=tensor_from_array(np.zeros(2)))),
            pb.NamedValue(name="fire", value=pb.Value(discrete=0)),
        ])))
    with_info(dict_steps[1], {"teacher_action": {"aim": [0.1, 0.2], "fire": 1}})
    arrays, _ = build_episode(dict_steps, "s1")
    assert arrays["teacher.action.aim"].tolist() == [[0, 0], [0.1, 0.2]]
    assert arrays["teacher.action.fire"].tolist() == [0, 1]
    assert arrays["teacher.valid"].tolist() == [False, True]
    with_reset_info(dict_steps[0], {"teacher_action": {"aim": [0.3, 0.4]}})  # no "fire": the row is left out
    arrays, _ = build_episode(dict_steps, "s1")
    assert arrays["teacher.valid"].tolist() == [False, True] and arrays["teacher.action.aim"][0].tolist() == [0, 0]


def test_no_teacher_action_no_teacher_columns() -> None:
    arrays, _ = build_episode([reset_event("s1", 1, 0), step_event("s1", 2, 0, 1, terminated=True)])
    assert "teacher.action" not in arrays and "teacher.valid" not in arrays


def test_outcome_is_the_last_steps_info_outcome_as_a_0d_string(tmp_path: Path) -> None:
    events = [
        reset_event("s1", 1, 0),
        with_info(step_event("s1", 2, 0, 1), {"outcome": "not yet"}),
        with_info(step_event("s1", 3, 0, 2, terminated=True), {"outcome": "killed_by_monster"}),
    ]
    arrays, summary = build_episode(events, "s1")
    assert arrays["outcome"].shape == () and arrays["outcome"].dtype.kind == "U"
    assert str(arrays["outcome"]) == "killed_by_monster" and summary["outcome"] == "killed_by_monster"
    (tmp_path / "e.npz").write_bytes(encode_npz(arrays))
    with np.load(tmp_path / "e.npz", allow_pickle=False) as data:
        assert data["outcome"].item() == "killed_by_monster"
    arrays, summary = build_episode(events[:2] + [step_event("s1", 3, 0, 2, terminated=True)], "s1")
    assert "outcome" not in arrays and "outcome" not in summary, "only the last step's info counts"
    arrays, summary = build_episode([events[0], with_info(step_event("s1", 2, 0, 1), {"outcome": 2})], "s1")
    assert str(arrays["outcome"]) == "2" and summary["outcome"] == "2"


def test_an_endless_files_restarts_keep_their_final_observation_info_and_outcome() -> None:
    from recorder_testkit import dict_obs

    events = [
        reset_event("s1", 1, 0, obs=dict_obs),
        with_info(step_event("s1", 2, 0, 1, obs=dict_obs), {"is_success": False}),
        with_info(step_event("s1", 3, 0, 2, obs=dict_obs, truncated=True), {"is_success": True, "outcome": "won"}),
        reset_event("s1", 4, 1, obs=dict_obs),  # the restart in place (no seed: the env made it)
        with_info(step_event("s1", 5, 1, 1, obs=dict_obs), {"is_success": False}),
    ]
    events[3].reset.info.CopyFrom(datamap_from_dict({"teacher_action": 1}))  # the new start's info
    arrays, summary = build_episode(events, "s1", endless=True)
    assert arrays["restarted"].tolist() == [False, True, False]
    assert not arrays["truncated"].any() and not arrays["terminated"].any()  # as the agent saw the step
    assert arrays["final_truncated"].tolist() == [True] and arrays["final_terminated"].tolist() == [False]
    assert arrays["observations.position"][:, 0].tolist() == [1, 2, 4, 5]  # row 2: the new start
    assert arrays["final_observations.position"].tolist() == [[3, -3]]
    assert arrays["final_observations.goal"].tolist() == [3]
    assert arrays["final_outcome"].tolist() == ["won"]
    assert arrays["info.is_success"].tolist() == [False, True, False]  # the restarted step's own (final_info's)
    assert arrays["teacher.valid"].tolist() == [False, False, True]  # row 2's info: the new start's
    assert arrays["seq"].tolist() == [2, 3, 5] and summary["length"] == 3 and summary["truncated"] is False
    plain, _ = build_episode(events[:3], "s1", endless=True)
    assert plain["restarted"].tolist() == [False, False] and "final_observations.position" not in plain
    assert "restarted" not in build_episode(events[:3], "s1")[0]  # not an endless file
