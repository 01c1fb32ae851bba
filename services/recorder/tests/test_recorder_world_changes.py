"""World changes in recordings: recording.json's `world_changes` (each applied change with its
event's seq, episode and episode_step; in seq order, once each; durable at close and found again
in part files after a crash), and `state.<name>` from the true observation while a sensor change
made the agent's differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from platform_contracts.json_values import space_to_json
from platform_contracts.values import tensor_from_array
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.recorded_world_changes import add_world_changes, event_world_changes
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    box_space,
    cartpole_obs,
    closed,
    episode_events,
    read_recording_info,
    reset_event,
    started,
    step_event,
    subject_of,
)
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import values_pb2 as pb

MASS = {"at": 2, "change": "mass", "body": "torso", "scale": 2.0}
NOISE = {"at": 3, "change": "sensor_offset", "offset": 100.0}


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def applying(event: events_pb2.StepEvent, *changes: dict[str, Any]) -> events_pb2.StepEvent:
    """`event` carrying the changes as the env host keeps them (ForRecording.world_changes_json)."""
    carrier = event.step.result if event.HasField("step") else event.reset
    carrier.for_recording.world_changes_json.extend(json.dumps(change) for change in changes)
    return event


def recorded(entry: dict[str, Any], index: int, session_step: int, seq: int, episode: int,
             episode_step: int) -> dict[str, Any]:
    return {**entry, "index": index, "session_step": session_step, "seq": seq, "episode": episode,
            "episode_step": episode_step}


def _events() -> list[events_pb2.StepEvent]:
    first = episode_events("s1", 1, 0, 3)  # seqs 1..4, session steps 0..2
    second = episode_events("s1", 5, 1, 2)  # seqs 5..7, session steps 3..4
    applying(first[3], {**MASS, "index": 0, "session_step": 2})
    applying(second[1], {**NOISE, "index": 1, "session_step": 3})
    return [*first, *second]


def test_recording_json_lists_the_applied_changes_where_they_happened(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *_events()))
    expected = [recorded(MASS, 0, 2, 4, 0, 3), recorded(NOISE, 1, 3, 6, 1, 1)]
    assert read_recording_info(tmp_path, "s1")["world_changes"] == expected  # appended as they arrive
    assert writer.process(msgs(*_events()))["duplicate"] == 7  # a redelivery adds nothing
    writer.process(msgs(closed("s1", last_seq=7)))
    info = read_recording_info(tmp_path, "s1")
    assert info["status"] == "closed" and info["world_changes"] == expected


def test_changes_a_lagging_recording_json_missed_are_found_in_the_part_files(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, meta_interval=60)
    events = _events()
    writer.process(msgs(started("s1"), *events[:6]))  # seq 6 applied the offset; its episode is open
    assert read_recording_info(tmp_path, "s1")["world_changes"] == []  # not written yet
    # killed here: a new writer finds both changes in the part files
    again = RecordingWriter(tmp_path, meta_interval=60)
    again.recover()
    again.process(msgs(events[6], closed("s1", last_seq=7)))
    assert read_recording_info(tmp_path, "s1")["world_changes"] == [
        recorded(MASS, 0, 2, 4, 0, 3), recorded(NOISE, 1, 3, 6, 1, 1)]


def test_a_change_met_again_after_a_restore_is_listed_again_and_late_events_go_in_seq_order() -> None:
    info: dict[str, Any] = {"world_changes": []}
    change = {**MASS, "index": 0, "session_step": 2}
    later = applying(step_event("s1", 9, 2, 1), change)
    earlier = applying(step_event("s1", 4, 0, 3), change)
    assert add_world_changes(info, event_world_changes(later))
    assert add_world_changes(info, event_world_changes(earlier))  # another seq: the same change met again
    assert not add_world_changes(info, event_world_changes(earlier))
    assert [c["seq"] for c in info["world_changes"]] == [4, 9]


def test_a_change_that_is_not_a_json_object_is_logged_and_left_out(caplog: Any) -> None:
    event = step_event("s1", 3, 0, 2)
    event.step.result.for_recording.world_changes_json.extend(["{oops", "[1, 2]"])
    assert event_world_changes(event, "session s1") == []
    assert "seq 3 carries a world change that is not JSON" in caplog.text
    assert "not a JSON object" in caplog.text


def _offset(value: pb.Value, by: float) -> pb.Value:
    array = np.frombuffer(value.tensor.data, dtype=np.float32) + np.float32(by)
    return pb.Value(tensor=tensor_from_array(array))


def test_state_columns_are_the_true_observations_while_a_sensor_change_is_in_force() -> None:
    spec = {"observation_space": space_to_json(box_space(np.ones(4, np.float32))),
            "observation_labels": [{"name": "cart", "start": 0, "stop": 2}]}
    events = [reset_event("s1", 1, 0), *[step_event("s1", seq, 0, seq - 1) for seq in (2, 3, 4)]]
    for event in events[2:]:  # from seq 3 on the agent sees every value 100 higher
        result = event.step.result
        result.for_recording.true_observation.CopyFrom(result.observation)
        result.observation.CopyFrom(_offset(result.observation, 100.0))
    arrays, _ = build_episode(events, "session s1", spec=spec)
    assert arrays["observations"][:, 0].tolist() == [1, 2, 103, 104]  # what the agent saw
    assert arrays["state.cart"].tolist() == [[1, 0.5], [2, 0.5], [3, 0.5], [4, 0.5]]  # what was true
    plain, _ = build_episode(episode_events("s1", 1, 0, 3, last=""), "session s1", spec=spec)
    assert plain["state.cart"][:, 0].tolist() == [1, 2, 3, 4]


def test_a_reset_after_an_auto_reset_keeps_its_true_first_observation() -> None:
    spec = {"observation_space": space_to_json(box_space(np.ones(4, np.float32))),
            "observation_labels": [{"name": "x", "start": 0, "stop": 1}]}
    reset = reset_event("s1", 1, 0)
    reset.reset.for_recording.true_observation.CopyFrom(cartpole_obs(1))
    reset.reset.observation.CopyFrom(_offset(cartpole_obs(1), 7.0))
    arrays, _ = build_episode([reset, step_event("s1", 2, 0, 1)], "session s1", spec=spec)
    assert arrays["state.x"].tolist() == [[1], [2]] and arrays["observations"][:, 0].tolist() == [8, 2]
