"""The writer on real files, without NATS: exactly-once, episode ends, recovery after crashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from platform_recorder.errors import InvalidRecordingIdError, RecordingNotFoundError
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.writing.part_files import encode_record
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    closed,
    dict_spec,
    episode_events,
    list_recordings,
    load_episode,
    read_meta,
    started,
    step_event,
    subject_of,
)


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def all_seqs(root: Path, sid: str) -> list[int]:
    meta = read_meta(root, sid)
    out: list[int] = []
    for ep in meta.episodes:
        out.append(ep["first_seq"])
        out.extend(load_episode(root, sid, ep["index"])["seq"].tolist())
    return out


def test_episodes_meta_and_duplicates(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    ep0 = episode_events("s1", 1, 0, 3)  # seq 1..4, terminated
    ep1 = episode_events("s1", 5, 1, 2, last="truncated")  # seq 5..7
    counts = writer.process(msgs(started("s1", kwargs={"max_steps": 9}), *ep0, *ep1[:2]))
    assert counts["written"] == 6 and counts["started"] == 1
    counts = writer.process(msgs(*ep0[2:], *ep1))  # redelivered overlap
    assert counts["duplicate"] == 4 and counts["written"] == 1
    meta = read_meta(tmp_path, "s1")
    assert meta.kwargs == {"max_steps": 9} and meta.env_id == "CartPole-v1"
    assert meta.observation_space["type"] == "box" and meta.action_space["n"] == 2
    assert meta.status == "recording" and meta.last_seq == 7
    assert [
        (e["index"], e["length"], e["return"], e["terminated"], e["truncated"], e["start"])
        for e in meta.episodes
    ] == [(0, 3, 6.0, True, False, "reset"), (1, 2, 3.0, False, True, "reset")]
    assert meta.episodes[1]["first_seq"] == 5 and meta.episodes[1]["last_seq"] == 7
    assert all_seqs(tmp_path, "s1") == list(range(1, 8))
    assert sorted(p.name for p in (tmp_path / "s1").iterdir()) == [
        "episode-000000.npz",
        "episode-000001.npz",
        "meta.json",
        "recording.json",
    ]


def test_unrecorded_and_unknown_sessions_are_ignored(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    counts = writer.process(
        msgs(
            started("s2", record=False),
            *episode_events("s2", 1, 0, 2),
            *episode_events("nope", 1, 0, 1),
            closed("s2"),
        )
    )
    assert counts["ignored"] == 7 and counts["written"] == 0  # every one of the 7 messages
    assert list(tmp_path.iterdir()) == []


def test_started_again_keeps_the_recording(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 2)))
    assert RecordingWriter(tmp_path).process(msgs(started("s1")))["duplicate"] == 1
    assert len(read_meta(tmp_path, "s1").episodes) == 1


def test_close_mid_episode_finishes_it_and_crash_keeps_reason(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    events = episode_events("s1", 1, 0, 4, last="")
    writer.process(msgs(started("s1"), *events))
    assert (tmp_path / "s1" / "episode-000000.part").exists()
    writer.process(msgs(closed("s1", last_seq=5, crashed=True, reason="instance died")))
    meta = read_meta(tmp_path, "s1")
    assert meta.status == "crashed" and meta.reason == "instance died" and "boom" in meta.log_tail
    assert meta.episodes[0]["length"] == 4 and meta.episodes[0]["terminated"] is False
    assert load_episode(tmp_path, "s1", 0)["rewards"].tolist() == [1, 2, 3, 4]
    assert not list((tmp_path / "s1").glob("*.part"))


@pytest.mark.parametrize("durable", [False, True])
def test_a_session_ended_without_its_env_host_says_answered_steps_may_be_missing(tmp_path: Path,
                                                                                 durable: bool) -> None:
    """The broker's CRASHED of a session whose env host died (last_seq 0: what was published is
    unknown): the recording says it holds up to last_seq and whether answered steps after it may
    be missing (not for a durable session); a close with a known last seq says nothing of it."""
    writer = RecordingWriter(tmp_path)
    start = started("s1")
    start.options.durable = durable
    writer.process(msgs(start, *episode_events("s1", 1, 0, 3, last="")))
    writer.process(msgs(closed("s1", last_seq=0, crashed=True, reason="no heartbeat")))
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and meta.last_seq == 4 and meta.published_last_seq is None
    assert meta.tail_may_be_missing is (not durable) and meta.durable is (True if durable else None)
    assert json.loads((tmp_path / "s1" / "meta.json").read_text())["tail_may_be_missing"] is (not durable)
    writer.process(msgs(started("s2"), *episode_events("s2", 1, 0, 2, last=""), closed("s2", last_seq=3)))
    plain = json.loads((tmp_path / "s2" / "meta.json").read_text())
    assert "tail_may_be_missing" not in plain and "durable" not in plain


def test_new_reset_finishes_the_previous_episode(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 3, last="")))
    writer.process(msgs(*episode_events("s1", 5, 1, 1, last="")))
    meta = read_meta(tmp_path, "s1")
    assert [e["index"] for e in meta.episodes] == [0] and meta.episodes[0]["length"] == 3
    assert (tmp_path / "s1" / "episode-000001.part").exists()


def test_gap_is_written_and_late_arrival_is_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    writer = RecordingWriter(tmp_path)
    events = episode_events("s1", 1, 0, 5)
    writer.process(msgs(started("s1"), *events[:2], *events[3:5]))  # seq 3 missing
    assert "GAP in session s1 env CartPole-v1" in caplog.text and "before seq 4" in caplog.text
    assert read_meta(tmp_path, "s1").missing_seqs == [3]
    writer = RecordingWriter(tmp_path)  # a restart: the gap is remembered
    assert writer.process(msgs(events[2], events[5]))["written"] == 2
    meta = read_meta(tmp_path, "s1")
    assert meta.missing_seqs == [] and meta.episodes[0]["length"] == 5
    assert all_seqs(tmp_path, "s1") == [1, 2, 3, 4, 5, 6]


def test_step_after_episode_end_goes_to_orphans(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 2)))
    counts = writer.process(msgs(step_event("s1", 4, 0, 3)))
    assert counts["orphan"] == 1
    assert read_meta(tmp_path, "s1").orphan_seqs == [4]
    assert (tmp_path / "s1" / "orphans.part").stat().st_size > 0
    assert RecordingWriter(tmp_path).process(msgs(step_event("s1", 4, 0, 3)))["duplicate"] == 1


def _crash_state(tmp_path: Path, events: list[Any]) -> Path:
    """A recording with an open part holding `events`, as a killed recorder leaves it."""
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1")))
    folder = tmp_path / "s1"
    with open(folder / "episode-000000.part", "wb") as f:
        f.writelines(encode_record(e) for e in events)
    return folder


def test_recovery_after_npz_rename_before_part_delete(tmp_path: Path) -> None:
    events = episode_events("s1", 1, 0, 3)
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *events))
    folder = tmp_path / "s1"
    meta_done = json.loads((folder / "meta.json").read_text())
    # Crash after the npz rename, before meta.json and the part delete: put the part back, old meta.
    with open(folder / "episode-000000.part", "wb") as f:
        f.writelines(encode_record(e) for e in events)
    meta_done.update(episodes=[], last_seq=0)
    (folder / "meta.json").write_text(json.dumps(meta_done))
    writer = RecordingWriter(tmp_path)
    assert writer.recover() == 1
    counts = writer.process(msgs(*events))  # redelivered: all duplicates
    assert counts["duplicate"] == 4
    meta = read_meta(tmp_path, "s1")
    assert len(meta.episodes) == 1 and meta.last_seq == 4
    assert all_seqs(tmp_path, "s1") == [1, 2, 3, 4]
    assert not (folder / "episode-000000.part").exists()


def test_recovery_of_a_torn_part_and_an_unfinished_end(tmp_path: Path) -> None:
    events = episode_events("s1", 1, 0, 4)
    folder = _crash_state(tmp_path, events[:4])
    with open(folder / "episode-000000.part", "ab") as f:
        f.write(encode_record(events[4])[:7])  # torn: the last step was never acked
    writer = RecordingWriter(tmp_path)
    counts = writer.process(msgs(*events))
    assert counts["duplicate"] == 4 and counts["written"] == 1
    assert all_seqs(tmp_path, "s1") == [1, 2, 3, 4, 5]
    # an ended episode whose npz was never written is finished on start
    folder2 = tmp_path / "s2"
    RecordingWriter(tmp_path).process(msgs(started("s2")))
    with open(folder2 / "episode-000000.part", "wb") as f:
        f.writelines(encode_record(e) for e in episode_events("s2", 1, 0, 2))
    RecordingWriter(tmp_path).recover()
    assert read_meta(tmp_path, "s2").episodes[0]["length"] == 2


def test_dict_observation_recording(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    from recorder_testkit import dict_obs

    writer.process(msgs(started("d1", spec=dict_spec()), *episode_events("d1", 1, 0, 3, obs=dict_obs)))
    data = load_episode(tmp_path, "d1", 0)
    assert data["observations.position"].shape == (4, 2) and data["observations.goal"].tolist() == [
        1,
        2,
        3,
        4,
    ]
    assert read_meta(tmp_path, "d1").observation_space["type"] == "dict"


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", "", "a\\b", "x/../../etc"])
def test_path_ids_are_rejected(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidRecordingIdError, match="invalid recording id"):
        read_meta(tmp_path, bad)
    with pytest.raises(InvalidRecordingIdError):
        load_episode(tmp_path, bad, 0)


def test_listing_filters_and_missing_things(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("a1"), started("b1", spec=dict_spec()), started("c1", record=False)))
    assert sorted(m["session_id"] for m in list_recordings(tmp_path)) == ["a1", "b1"]
    assert [m["session_id"] for m in list_recordings(tmp_path, env_id="DictNav-v0")] == ["b1"]
    assert [m["session_id"] for m in list_recordings(tmp_path, session_id="a1")] == ["a1"]
    assert list_recordings(tmp_path / "none") == []
    with pytest.raises(RecordingNotFoundError):
        RecordingStore(tmp_path).read_meta("c1")
    with pytest.raises(RecordingNotFoundError, match="no finished episode 0"):
        load_episode(tmp_path, "a1", 0)


def test_recovery_when_a_later_episode_reached_disk_before_the_end_of_the_earlier(tmp_path: Path) -> None:
    """A crash (or power loss) mid-batch left the next episode's events on disk but not the last
    steps of the current one: they are redelivered and must still land in their own episode."""
    ep0 = episode_events("s1", 1, 0, 6)  # seq 1..7
    ep1 = episode_events("s1", 8, 1, 3)  # seq 8..11
    folder = _crash_state(tmp_path, ep0[:4])  # episode 0 part: seq 1..4
    with open(folder / "episode-000001.part", "wb") as f:
        f.writelines(encode_record(e) for e in ep1[:2])  # episode 1 part: seq 8, 9
    writer = RecordingWriter(tmp_path)
    writer.recover()
    assert read_meta(tmp_path, "s1").missing_seqs == [5, 6, 7]
    assert not (folder / "episode-000000.npz").exists()  # not finished while its seqs may come
    counts = writer.process(msgs(*ep0[4:], *ep1))  # the redelivered batch
    assert counts["written"] == 5 and counts["duplicate"] == 2
    meta = read_meta(tmp_path, "s1")
    assert [e["length"] for e in meta.episodes] == [6, 3] and meta.orphan_seqs == []
    assert meta.missing_seqs == []
    assert all_seqs(tmp_path, "s1") == list(range(1, 12))
