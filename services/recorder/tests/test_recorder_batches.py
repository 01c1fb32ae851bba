"""StepEventBatch messages (holds, vector sessions) and sub-session recordings: the writer on real
files, then the recorder in-process on a real nats-server."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_contracts import subjects
from platform_contracts.step_batches import entries, frame_event
from platform_contracts.values import tensor_from_array
from platform_recorder.writing.part_files import part_path, read_part
from platform_recorder.writing.sub_sessions import split_sub_session_id, sub_session_ids
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    batch_of,
    cartpole_spec,
    closed,
    episode_events,
    load_episode,
    publish,
    publish_batch,
    read_meta,
    started,
    subject_of,
    wait_drained,
    wait_for,
)
from recorder_testkit import read_meta as read_meta_file
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def batch_msg(session_id: str, *events: Any) -> tuple[str, bytes]:
    return subjects.session_step_batches(session_id), batch_of(*events).SerializeToString()


def vector_spec(num_envs: int) -> env_pb.SpecResponse:
    spec = cartpole_spec()
    spec.num_envs = num_envs
    return spec


def all_seqs(root: Path, sid: str) -> list[int]:
    out: list[int] = []
    for ep in read_meta(root, sid).episodes:
        out.append(ep["first_seq"])
        out.extend(load_episode(root, sid, ep["index"])["seq"].tolist())
    return out


def test_a_hold_batch_is_written_once_and_a_redelivered_one_is_skipped(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    events = episode_events("s1", 1, 0, 6)  # seq 1..7
    counts = writer.process([*msgs(started("s1"), events[0]), batch_msg("s1", *events[1:4])])
    assert counts["written"] == 4 and counts["started"] == 1
    counts = writer.process([batch_msg("s1", *events[1:4]), batch_msg("s1", *events[4:])])
    assert counts["duplicate"] == 3 and counts["written"] == 3
    counts = RecordingWriter(tmp_path).process([batch_msg("s1", *events[1:])])  # after a restart
    assert counts["duplicate"] == 6 and counts["written"] == 0
    assert all_seqs(tmp_path, "s1") == list(range(1, 8))
    assert read_meta(tmp_path, "s1").episodes[0]["length"] == 6


def test_batch_events_naming_no_session_go_to_the_subjects(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    events = episode_events("s1", 1, 0, 2)
    for event in events:
        event.ClearField("session_id")
    writer.process([*msgs(started("s1")), batch_msg("s1", *events)])
    assert all_seqs(tmp_path, "s1") == [1, 2, 3]


def test_vector_session_sub_recordings_take_their_parents_meta(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    sid = "s-0123456789ab"
    subs = [subjects.sub_session_id(sid, i) for i in range(3)]
    per_sub = {s: episode_events(s, 1, 0, 4, last="") for s in subs}  # each its own seq 1..5
    writer.process(msgs(started(sid, spec=vector_spec(3), kwargs={"gravity": 9.0})))
    for row in range(5):
        writer.process([batch_msg(sid, *(per_sub[s][row] for s in subs))])
    again = writer.process([batch_msg(sid, *(per_sub[s][row] for s in subs)) for row in range(3)])
    assert again["duplicate"] == 9 and again["written"] == 0
    parent = read_meta(tmp_path, sid)
    assert parent.num_envs == 3 and parent.episodes == [] and parent.last_seq == 0
    for index, sub in enumerate(subs):
        meta = read_meta(tmp_path, sub)
        assert (meta.parent_session_id, meta.env_index, meta.status) == (sid, index, "recording")
        for key in ("env_id", "kwargs", "host_id", "observation_space", "action_space", "created_at"):
            assert getattr(meta, key) == getattr(parent, key), key
        assert meta.kwargs == {"gravity": 9.0}
    # closing the vector session closes every sub-session and finishes their open episodes
    writer.process(msgs(closed(sid, last_seq=0, reason="closed by user")))
    for sub in subs:
        meta = read_meta(tmp_path, sub)
        assert meta.status == "closed" and meta.reason == "closed by user" and meta.last_seq == 5
        assert meta.episodes[0]["length"] == 4 and all_seqs(tmp_path, sub) == [1, 2, 3, 4, 5]
        assert not list((tmp_path / sub).glob("*.part"))
    assert read_meta(tmp_path, sid).status == "closed"
    assert sub_session_ids(tmp_path, sid) == subs


def test_sub_session_recordings_continue_after_a_restart_exactly_once(tmp_path: Path) -> None:
    sid = "s-aaaaaaaaaaaa"
    sub = subjects.sub_session_id(sid, 1)
    events = episode_events(sub, 1, 0, 5)
    RecordingWriter(tmp_path).process([*msgs(started(sid, spec=vector_spec(2))), batch_msg(sid, *events[:3])])
    writer = RecordingWriter(tmp_path)  # a restart: the batch is redelivered with what follows
    writer.recover()
    counts = writer.process([batch_msg(sid, *events[:3]), batch_msg(sid, *events[3:])])
    assert counts["duplicate"] == 3 and counts["written"] == 3
    assert all_seqs(tmp_path, sub) == [1, 2, 3, 4, 5, 6]


def test_events_after_the_parent_closed_are_recorded_and_closed(tmp_path: Path) -> None:
    sid = "s-bbbbbbbbbbbb"
    sub = subjects.sub_session_id(sid, 0)
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started(sid, spec=vector_spec(2)), closed(sid, crashed=True, reason="died")))
    writer.process([batch_msg(sid, *episode_events(sub, 1, 0, 2, last=""))])
    meta = read_meta(tmp_path, sub)
    assert meta.status == "crashed" and meta.reason == "died" and "boom" in meta.log_tail
    assert meta.episodes[0]["length"] == 2 and not list((tmp_path / sub).glob("*.part"))


@pytest.mark.parametrize(("published", "per_sub"), [(3, [3, 2]), (3, []), (0, [])],
                         ids=["env-host-close", "older-env-host-close", "broker-close"])
def test_a_vector_close_gives_each_sub_session_its_own_published_last_seq(
    tmp_path: Path, published: int, per_sub: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    """The close of a vector session names each sub-environment's last published seq
    (`sub_last_seqs`): each sub-session's recording takes its own and checks it against what it
    recorded. Without them (an older env host) only whether the tail was known is kept, and the
    broker's close (0) says the tail may be missing. Its own recording (which holds none) logs no
    "only seq 0 was recorded"."""
    sid = "s-cccccccccccc"
    subs = [subjects.sub_session_id(sid, i) for i in range(2)]
    writer = RecordingWriter(tmp_path)
    events = [episode_events(sub, 1, 0, 2, last="") for sub in subs]
    batches = [batch_msg(sid, events[0][i], events[1][i]) for i in range(3)]
    batches[2] = batch_msg(sid, events[0][2])  # sub-environment 1 published its seq 3 to no one
    close = closed(sid, last_seq=published)
    close.sub_last_seqs.extend(per_sub)
    with caplog.at_level(logging.ERROR):
        writer.process([*msgs(started(sid, spec=vector_spec(2))), *batches, *msgs(close)])
    assert "only seq 0 was recorded" not in caplog.text
    assert not caplog.records, caplog.text
    for index, sub in enumerate(subs):
        meta = read_meta(tmp_path, sub)
        assert meta.status == "closed" and meta.last_seq == 3 - index
        assert meta.published_last_seq == (per_sub[index] if per_sub else None)
        assert meta.tail_may_be_missing is (True if not published else None)
    assert read_meta(tmp_path, sid).published_last_seq == (published or None)


def test_a_sub_session_published_past_what_it_recorded_is_logged_by_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sid = "s-dddddddddddd"
    sub = subjects.sub_session_id(sid, 1)
    writer = RecordingWriter(tmp_path)
    close = closed(sid, last_seq=2)
    close.sub_last_seqs.extend([2, 5])
    with caplog.at_level(logging.ERROR):
        writer.process([*msgs(started(sid, spec=vector_spec(2))),
                        batch_msg(sid, *episode_events(sub, 1, 0, 1, last="")), *msgs(close)])
    assert read_meta(tmp_path, sub).published_last_seq == 5
    assert sub in caplog.text and "closed after publishing seq 5 but only seq 2 was recorded" in caplog.text


def test_sub_session_recordings_of_a_durable_session_are_durable(tmp_path: Path) -> None:
    sid = "s-eeeeeeeeeeee"
    sub = subjects.sub_session_id(sid, 0)
    start = started(sid, spec=vector_spec(2))
    start.options.durable = True
    writer = RecordingWriter(tmp_path)
    writer.process([*msgs(start), batch_msg(sid, *episode_events(sub, 1, 0, 2, last="")),
                    *msgs(closed(sid, last_seq=0, reason="env host lost"))])
    meta = read_meta(tmp_path, sub)
    assert meta.durable is True and meta.tail_may_be_missing is False, "every answered step of a durable session was stored"


def test_what_is_not_a_sub_session_of_a_recording_is_ignored(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("v"), started("norec", record=False), started("run-7")))
    counts = writer.process([
        batch_msg("x", *episode_events("nope-0", 1, 0, 1)),  # no such parent
        batch_msg("norec", *episode_events("norec-0", 1, 0, 1)),  # parent not recorded
        batch_msg("v", *episode_events("v-01", 1, 0, 1)),  # not canonical
        batch_msg("v", *episode_events("v-", 1, 0, 1)),
    ])
    assert counts["ignored"] == 8 and counts["written"] == 0
    writer.process([batch_msg("v", *episode_events("v-0", 1, 0, 1))])
    counts = writer.process([batch_msg("v", *episode_events("v-0-1", 1, 0, 1))])  # a sub of a sub
    assert counts["ignored"] == 2
    # a session whose own id ends in -<digits> records as itself
    writer.process(msgs(*episode_events("run-7", 1, 0, 2)))
    assert read_meta(tmp_path, "run-7").parent_session_id is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-7", "v", "v-0"]


@pytest.mark.parametrize(
    ("session_id", "expected"),
    [("s-1-0", ("s-1", 0)), ("a-b-12", ("a-b", 12)), ("x-07", None), ("x", None), ("-3", None), ("x-3a", None)],
)
def test_split_sub_session_id(session_id: str, expected: tuple[str, int] | None) -> None:
    assert split_sub_session_id(session_id) == expected


async def test_vector_batches_over_jetstream_exactly_once_through_a_failed_batch(
    recorder_js: tuple[Any, Any],
    recorder_service: Any,
    tmp_path: Path,
    unique_prefix: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="platform_recorder")
    _, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-vec"
    subs = [subjects.sub_session_id(sid, i) for i in range(2)]
    per_sub = {s: [*episode_events(s, 1, 0, 3), *episode_events(s, 5, 1, 4)] for s in subs}  # seq 1..9
    await publish(js, started(sid, spec=vector_spec(2), kwargs={"seed": 3}))
    number = 0
    for row in range(4):  # episode 0 of each
        number += 1
        await publish_batch(js, sid, number, [per_sub[s][row] for s in subs])
    await wait_for(lambda: all(read_meta_file(root, s) for s in subs), what="the sub-session folders")
    blocker = root / subs[1] / "episode-000001.part"
    blocker.mkdir()  # sub-session 1's episode 1 cannot be written: its batches fail
    for row in range(4, 9):
        number += 1
        await publish_batch(js, sid, number, [per_sub[s][row] for s in subs])
    # the same batch published again under another Nats-Msg-Id (JetStream cannot dedupe it)
    await publish_batch(js, sid, 5, [per_sub[s][4] for s in subs], msg_id=f"{sid}:batch:5:again")
    await wait_for(lambda: "could not be written" in caplog.text, what="a failed batch")
    blocker.rmdir()
    for sub in subs:
        meta = await wait_for(
            lambda sub=sub: (m := read_meta_file(root, sub)) and len(m.episodes) == 2 and m,
            timeout=30,
            what=f"two episodes of {sub}",
        )
        assert [e["length"] for e in meta.episodes] == [3, 4] and meta.missing_seqs == []
        assert meta.kwargs == {"seed": 3} and meta.parent_session_id == sid
        assert all_seqs(root, sub) == list(range(1, 10))
    await wait_drained(js)


def image_obs(seq: int) -> Any:
    """A 64x64 RGB screen, mostly one colour like an Atari frame, with the seq in its first pixel."""
    image = np.full((64, 64, 3), 90, dtype=np.uint8)
    image[0, 0, 0] = seq
    return pb.Value(tensor=tensor_from_array(image))


def test_compressed_events_stay_compressed_in_part_files_and_load_after_a_restart(tmp_path: Path) -> None:
    events = episode_events("s1", 1, 0, 8, obs=image_obs)  # seq 1..9, 12 KB observations
    framed = [frame_event(e.SerializeToString()) for e in events]
    assert all(entry.compressed for f in framed for entry in entries(f))
    writer = RecordingWriter(tmp_path)
    batches = subjects.session_step_batches("s1")
    writer.process([*msgs(started("s1")), (batches, b"".join(framed[:5]))])
    part = part_path(tmp_path / "s1", 0)
    assert part.stat().st_size < 5 * 1000  # 5 events of 12 KB each, kept as zstd frames
    assert read_part(part) == events[:5]

    writer = RecordingWriter(tmp_path)  # a restart: the open episode is read back from its part
    counts = writer.process([(batches, b"".join(framed[3:]))])  # 3, 4 again: a redelivery
    assert counts["duplicate"] == 2 and counts["written"] == 4
    assert all_seqs(tmp_path, "s1") == list(range(1, 10))
    arrays = load_episode(tmp_path, "s1", 0)
    assert arrays["observations"].shape == (9, 64, 64, 3)
    assert arrays["observations"][:, 0, 0, 0].tolist() == list(range(1, 10))
