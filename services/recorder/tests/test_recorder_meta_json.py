"""meta.json, typed: the encoder that keeps the spaces' JSON gives what json gives, every meta.json
the recorder writes reads back as it was, and recordings of older recorders still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from platform_recorder.errors import InvalidMetaError
from platform_recorder.meta import MetaEncoder, RecordingMeta, RecordingStatus, encode_json
from platform_recorder.reading.recording_store import RecordingOpenError, RecordingStore
from platform_recorder.writing.writer import RecordingWriter
from simulusion.recorder.v1 import recorder_pb2 as rec
from recorder_testkit import closed, episode_events, file_list, load_episode, started, subject_of, summaries


def msgs(*events: object) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]  # type: ignore[arg-type]


def _meta(bound: float) -> RecordingMeta:
    return RecordingMeta(
        id="s-1",
        session_id="s-1",
        kwargs={"frameskip": 4},
        observation_space={"type": "Box", "low": [0.0] * 1000, "high": [bound] * 1000},
        action_space={"type": "Discrete", "n": 6},
    )


def test_meta_bytes_are_json_and_follow_what_changes() -> None:
    encoder = MetaEncoder()
    meta = _meta(255.0)
    assert encoder.encode(meta) == encode_json(meta.to_json())
    meta.episodes.append({"index": 0, "length": 7, "return": float("nan")})  # non-finite: a string
    meta.last_seq = 8
    assert encoder.encode(meta) == encode_json(meta.to_json())
    assert json.loads(encoder.encode(meta))["episodes"][0]["return"] == "nan"
    meta.observation_space = _meta(float("inf")).observation_space  # a new value (a reload)
    assert json.loads(encoder.encode(meta))["observation_space"]["high"][0] == "inf"
    assert list(json.loads(encoder.encode(meta))) == list(meta.to_json())  # members in meta's order


def test_what_the_recorder_writes_reads_back_member_for_member(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1", kwargs={"g": 9.0}), *episode_events("s1", 1, 0, 3),
                        closed("s1", last_seq=4, crashed=True, reason="died")))
    on_disk = json.loads((tmp_path / "s1" / "meta.json").read_bytes())
    meta = RecordingMeta.from_json(on_disk)
    assert meta.to_json() == on_disk and list(meta.to_json()) == list(on_disk)
    assert meta.status is RecordingStatus.CRASHED and not meta.is_recording
    assert (meta.reason, meta.log_tail, meta.published_last_seq) == ("died", "Traceback: boom", 4)
    assert "parent_session_id" not in on_disk and "life" not in on_disk  # unset members stay out
    assert on_disk["observation_space"]["type"] == "box" and on_disk["status"] == "crashed"


# meta.json as the recorder wrote it before `num_envs`, `updated_at`, `closed_at` and recording.json
# existed (commit 26cb9ec), with a member from some other version besides.
OLD_META = {
    "id": "old-1",
    "session_id": "old-1",
    "env_id": "CartPole-v1",
    "kwargs": {},
    "host_id": "h1",
    "observation_space": {"type": "box", "shape": [4], "dtype": "float32", "low": -1.0, "high": 1.0},
    "action_space": {"type": "discrete", "n": 2, "start": 0},
    "created_at": "2026-11-01T10:00:00.000000Z",
    "status": "closed",
    "reason": "closed by user",
    "episodes": [],
    "agent_keys": [],
    "last_seq": 4,
    "missing_seqs": [],
    "orphan_seqs": [],
    "operator_note": "kept as it is",
}


def _old_recording(root: Path) -> dict:
    """A recording whose files an older recorder wrote: its npz, an old meta.json, no recording.json."""
    writer = RecordingWriter(root)
    writer.process(msgs(started("old-1"), *episode_events("old-1", 1, 0, 3), closed("old-1", last_seq=4)))
    episode = json.loads((root / "old-1" / "meta.json").read_bytes())["episodes"][0]
    (root / "old-1" / "recording.json").unlink()
    old = {**OLD_META, "episodes": [episode]}
    (root / "old-1" / "meta.json").write_text(json.dumps(old, indent=2))
    return old


def test_a_recording_of_an_older_recorder_reads_through_the_store(tmp_path: Path) -> None:
    old = _old_recording(tmp_path)
    store = RecordingStore(tmp_path)
    meta = store.read_meta("old-1")
    assert meta.status is RecordingStatus.CLOSED and meta.num_envs is None and meta.updated_at is None
    assert meta.extra == {"operator_note": "kept as it is"}
    assert meta.to_json() == old  # what the API answers: the file's members, none added or lost
    [summary] = summaries(store, env_id="CartPole-v1")
    assert summary["episode_count"] == 1 and summary["operator_note"] == "kept as it is"
    assert load_episode(tmp_path, "old-1", 0)["seq"].tolist() == [2, 3, 4]  # the steps' seqs
    assert {f["name"] for f in file_list(store, "old-1")} == {"meta.json", "episode-000000.npz"}
    assert store.delete("old-1") > 0 and not (tmp_path / "old-1").exists()


def test_the_message_of_a_meta_carries_every_member(tmp_path: Path) -> None:
    """What the recordings API sends (simulusion.recorder.v1.RecordingMeta) is meta.json exactly,
    for an older recorder's file as for this one's."""
    _old_recording(tmp_path)
    meta = RecordingStore(tmp_path).read_meta("old-1")
    message = rec.RecordingMeta.FromString(meta.to_message().SerializeToString())
    assert message.status == rec.RECORDING_STATUS_CLOSED and message.episodes[0].index == 0
    again = RecordingMeta.from_message(message)
    assert again.to_json() == meta.to_json() and again.extra == {"operator_note": "kept as it is"}

    writer = RecordingWriter(tmp_path)
    writer.process([(subject_of(e), e.SerializeToString())
                    for e in (started("s1"), *episode_events("s1", 1, 0, 3), closed("s1", last_seq=4))])
    written = RecordingStore(tmp_path).read_meta("s1")
    assert RecordingMeta.from_message(written.to_message()).to_json() == written.to_json()
    assert written.to_message().episodes[0].length == 3


def test_an_older_recording_without_some_members_takes_their_defaults(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "meta.json").write_text(json.dumps({"session_id": "bare", "episodes": []}))
    meta = RecordingStore(tmp_path).read_meta("bare")
    assert (meta.id, meta.status, meta.agent_keys, meta.last_seq) == ("bare", RecordingStatus.RECORDING, [], 0)
    with pytest.raises(RecordingOpenError, match="still being recorded"):  # no status: recording
        RecordingStore(tmp_path).delete("bare")


@pytest.mark.parametrize(
    ("body", "message"),
    [([1, 2], "not a JSON object"), ({"episodes": []}, "no recording id"), ({"id": "x", "status": "paused"},
                                                                             "status 'paused'")],
)
def test_a_meta_json_that_is_not_a_recordings_is_named(tmp_path: Path, body: object, message: str) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "meta.json").write_text(json.dumps(body))
    with pytest.raises(InvalidMetaError, match=message):
        RecordingStore(tmp_path).read_meta("x")
    assert summaries(RecordingStore(tmp_path)) == []  # logged and left out of the listing


def test_recording_json_is_endless_by_the_sessions_option_or_the_instances_spec() -> None:
    from platform_recorder.writing.recording_json import new_recording_info

    event = started("s-e", kwargs={"endless": True, "g": 1})  # the environment's kwargs, as the instance had them
    event.options.endless = True  # SessionOptions.endless, as the broker hands it on
    meta = RecordingMeta.from_started(event)
    info = new_recording_info(event, meta.kwargs)
    assert info["spec"]["endless"] is True and info["kwargs"] == meta.kwargs == {"endless": True, "g": 1}
    assert new_recording_info(started("s-spec", endless=True), {})["spec"]["endless"] is True
    assert new_recording_info(started("s-plain"), {})["spec"]["endless"] is False
