"""platform_contracts.recorder_json: meta.json and comparison summaries through the recorder's messages."""

from __future__ import annotations

import math

from platform_contracts.recorder_json import (
    message_from_json,
    message_to_json,
    recording_to_json,
    summary_to_json,
)
from simulusion.recorder.v1 import recorder_pb2 as rec

META = {
    "id": "s-1", "session_id": "s-1", "env_id": "cartpole", "team": "default", "kwargs": {"x": [1, 2.5]},
    "host_id": None, "observation_space": None, "action_space": {"type": "discrete", "n": 2, "start": 0},
    "num_envs": 1, "created_at": "2025-01-01T00:00:00Z", "status": "closed", "reason": "client closed",
    "closed_at": "2025-01-01T00:01:00Z", "life": "robot-1", "life_offset": 40,
    "episodes": [
        {"index": 0, "file": "episode-000000.npz", "length": 2, "return": "nan", "start": "reset", "seed": 7,
         "reset_options": {"a": 1}, "terminated": True, "truncated": False, "first_seq": 1, "last_seq": 3,
         "is_success": True, "outcome": {"kills": 2}, "life_start": 40, "episode": 3, "continued": True,
         "restarts": 2},
        {"index": 1, "file": None, "error": "no arrays", "length": 0, "return": None, "seed": None,
         "reset_options": None},
    ],
    "agent_keys": ["value"], "last_seq": 3, "missing_seqs": [], "orphan_seqs": [2],
}


def test_meta_round_trips_exactly() -> None:
    message = message_from_json(META, rec.RecordingMeta())
    assert message.status == rec.RECORDING_STATUS_CLOSED and message.episodes[0].seed == 7
    assert math.isnan(message.episodes[0].episode_return) and not message.extra_json
    first = message.episodes[0]
    assert (first.life_start, first.episode, first.continued, first.restarts) == (40, 3, True, 2)
    assert not message.episodes[0].extra_json
    assert set(message.null_members) == {"host_id"}
    again = rec.RecordingMeta.FromString(message.SerializeToString())
    assert message_to_json(again) == META


def test_members_that_do_not_fit_or_are_unknown_travel_as_they_were() -> None:
    body = {"id": "s", "session_id": "s", "status": "recording", "num_envs": "2", "last_seq": 2.0,
            "future_member": {"a": [1]}, "episodes": [{"index": 0, "return": 3, "seed": 2**70, "new": True}],
            "agent_keys": ["a", 1]}
    message = message_from_json(body, rec.RecordingMeta())
    assert not message.HasField("num_envs") and not message.HasField("last_seq")
    assert not message.episodes[0].HasField("episode_return") and not message.episodes[0].HasField("seed")
    assert message_to_json(message) == {**body, "missing_seqs": [], "orphan_seqs": []}


def test_a_status_it_does_not_know_is_kept_too() -> None:
    body = {"id": "s", "session_id": "s", "status": "paused"}
    message = message_from_json(body, rec.RecordingMeta())
    assert message.status == rec.RECORDING_STATUS_UNSPECIFIED
    assert message_to_json(message)["status"] == "paused"


def test_summary_and_recording_replies_as_the_rest_api_shows_them() -> None:
    meta = message_from_json({k: v for k, v in META.items() if k != "episodes"}, rec.RecordingMeta())
    summary = rec.RecordingSummary(meta=meta, episode_count=2, step_count=2, total_return=float("inf"),
                                   saved_snapshots=[rec.SavedSnapshotRef(id="snap", label="x", seq=2, created_at=1.5)])
    out = summary_to_json(summary)
    assert "episodes" not in out and out["total_return"] == "inf" and out["episode_count"] == 2
    assert out["saved_snapshots"] == [{"id": "snap", "label": "x", "seq": 2, "created_at": 1.5}]
    assert summary_to_json(rec.RecordingSummary(meta=meta))["total_return"] is None

    reply = rec.GetRecordingReply(recording=message_from_json(META, rec.RecordingMeta()))
    assert recording_to_json(reply) == {**META, "world_changes": [], "spec": None, "open_episode": None}
    reply.world_changes_json, reply.spec_json = '[{"at":5}]', '{"metadata":{}}'
    got = recording_to_json(reply)
    assert got["world_changes"] == [{"at": 5}] and got["spec"] == {"metadata": {}}


def test_comparison_summary() -> None:
    body = {"id": "cmp-000000000001", "created": "2026-01-01T00:00:00.000Z", "env": "cartpole", "steps": 100,
            "window": None, "team": "default", "agents": ["a", "b"]}
    message = message_from_json(body, rec.ComparisonSummary())
    assert list(message.agents) == ["a", "b"] and not message.extra_json
    assert message_to_json(message) == body
