"""`agent.<name>` and `info.is_success` columns: episode arrays, and meta.json through the writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_contracts.values import datamap_from_dict
from platform_recorder.episodes import build_episode
from platform_recorder.reading import load_episode, read_meta
from platform_recorder.writer import RecordingWriter
from recorder_testkit import reset_event, started, step_event, subject_of
from simulusion.bus.v1 import events_pb2


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


def test_is_success_column_and_episode_outcome() -> None:
    events = [
        reset_event("s1", 1, 0),
        with_info(step_event("s1", 2, 0, 1), {"is_success": False, "x": 1}),
        step_event("s1", 3, 0, 2),
        with_info(step_event("s1", 4, 0, 3), {"is_success": 0.0}),
        with_info(step_event("s1", 5, 0, 4, terminated=True), {"is_success": True}),
    ]
    arrays, summary = build_episode(events, "session s1")
    assert arrays["info.is_success"].dtype == np.float64
    np.testing.assert_array_equal(arrays["info.is_success"], [0.0, np.nan, 0.0, 1.0])
    assert summary["is_success"] is True
    arrays, summary = build_episode(events[:4], "session s1")  # ends on a step that has it: 0
    assert summary["is_success"] is False
    arrays, summary = build_episode(events[:3], "session s1")  # the last step has none
    assert "is_success" not in summary and "info.is_success" in arrays


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
    assert meta["agent_keys"] == ["confidence", "refused"]
    assert "is_success" not in meta["episodes"][0] and meta["episodes"][1]["is_success"] is True
    data = load_episode(tmp_path, "s1", 1)
    assert data["agent.refused"].tolist() == [1.0] and data["info.is_success"].tolist() == [1.0]
    assert "agent.confidence" not in data
