"""The files of lives and endless runs, written by the writer on real files: thinned frames with
their `frame_steps`, and endless runs cut into files of 1,000 steps (across a recorder restart)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from platform_contracts.frame_thinning import is_kept
from platform_recorder.writing.part_files import encode_record
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    closed,
    episode_events,
    load_episode,
    read_meta,
    reset_event,
    started,
    step_event,
    subject_of,
)
from simulusion.env.v1 import environment_pb2 as env_pb

LIFE = "robot-1"


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def jpeg_of(event: Any) -> bytes:
    """A stand-in JPEG naming its event (the recorder stores frames as bytes)."""
    return b"\xff\xd8" + f"{event.session_id}:{event.seq}".encode() + b"\xff\xd9"


def with_frames(events: list[Any]) -> list[Any]:
    for event in events:
        frame = env_pb.Frame(encoding="jpeg", width=2, height=2, data=jpeg_of(event))
        if event.WhichOneof("kind") == "reset":
            event.reset.frame.CopyFrom(frame)
        else:
            event.step.result.frame.CopyFrom(frame)
    return events


def frames_of(root: Path, sid: str, index: int) -> tuple[list[bytes], list[int], dict[str, np.ndarray]]:
    arrays = load_episode(root, sid, index)
    return [bytes(f) for f in arrays.get("frames", [])], arrays["frame_steps"].tolist(), arrays


def test_frame_every_keeps_the_frames_of_every_nth_life_step(tmp_path: Path) -> None:
    s1 = with_frames([*episode_events("s1", 1, 0, 5), *episode_events("s1", 7, 1, 4, last="")])
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1", life=LIFE, frame_every=2), *s1, closed("s1", last_seq=11)))
    frames, steps, arrays = frames_of(tmp_path, "s1", 0)
    assert steps == [0, 2, 4]  # the life's first reset row, then the steps 2 and 4
    assert frames == [jpeg_of(s1[0]), jpeg_of(s1[2]), jpeg_of(s1[4])]
    # thinning affects frames only: every other array keeps a row per step
    assert arrays["observations"].shape == (6, 4) and arrays["rewards"].tolist() == [1, 2, 3, 4, 5]
    assert arrays["frame_steps"].dtype == np.int64 and arrays["life_start"].shape == ()
    frames, steps, _ = frames_of(tmp_path, "s1", 1)  # its reset row (step 5) shares step 5 with the end
    assert steps == [6, 8] and frames == [jpeg_of(s1[7]), jpeg_of(s1[9])]
    meta = read_meta(tmp_path, "s1")
    assert (meta.frame_every, meta.max_frames) == (2, 0)
    assert [e["life_start"] for e in meta.episodes] == [0, 5]
    # the next session goes on with the life's settings (its reset row at step 9 is not kept)
    s2 = with_frames(episode_events("s2", 1, 0, 4, last=""))
    writer.process(msgs(started("s2", life=LIFE, frame_every=2), *s2, closed("s2", last_seq=5)))
    frames, steps, _ = frames_of(tmp_path, "s2", 0)
    assert steps == [10, 12] and frames == [jpeg_of(s2[1]), jpeg_of(s2[3])]


def test_max_frames_is_never_exceeded_across_sessions(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    kept: list[int] = []
    first_seq = {}
    for number, sid in enumerate(["s1", "s2", "s3"]):
        events = with_frames([*episode_events(sid, 1, 0, 6), *episode_events(sid, 8, 1, 9, last="")])
        first_seq[sid] = events
        writer.process(msgs(started(sid, life=LIFE, max_frames=4), *events, closed(sid, last_seq=17)))
        for entry in read_meta(tmp_path, sid).episodes:
            frames, steps, arrays = frames_of(tmp_path, sid, entry["index"])
            assert len(frames) == len(steps) and arrays["observations"].shape[0] == entry["length"] + 1
            kept.extend(steps)
        assert read_meta(tmp_path, sid).life_offset == 15 * number
    # M = 4: segments of one frame, spacing 1, 2, 4, 8: life steps 0, 1, 3, 7, then never again
    assert kept == [0, 1, 3, 7] == [t for t in range(45) if is_kept(t, 0, 4)]
    assert frames_of(tmp_path, "s1", 1)[0] == [jpeg_of(first_seq["s1"][8])]  # seq 9: life step 7


def test_an_endless_run_is_cut_into_files_of_1000_steps(tmp_path: Path) -> None:
    sid = "s-endless"
    run = [reset_event(sid, 1, 0)] + [step_event(sid, 1 + i, 0, i) for i in range(1, 2501)]
    run += episode_events(sid, 2502, 1, 3)  # the env ended it: a new episode
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started(sid, life=LIFE, endless=True), *run[:700]))
    writer.process(msgs(*run[650:1400]))  # redelivered overlap
    writer = RecordingWriter(tmp_path)  # a restart with the second file open
    writer.recover()
    writer.process(msgs(*run[1300:2200]))
    writer = RecordingWriter(tmp_path)  # and again, the rest redelivered from seq 2002
    writer.process(msgs(*run[2001:]))
    writer.process(msgs(closed(sid, last_seq=2505)))
    meta = read_meta(tmp_path, sid)
    entries = [(e["index"], e["episode"], e["length"], e["start"], e.get("continued", False), e["life_start"])
               for e in meta.episodes]
    assert entries == [
        (0, 0, 1000, "reset", False, 0),
        (1, 0, 1000, "none", True, 1000),
        (2, 0, 500, "none", True, 2000),
        (3, 1, 3, "reset", False, 2500),
    ]
    seqs: list[int] = []
    for entry in meta.episodes:
        arrays = load_episode(tmp_path, sid, entry["index"])
        rows = entry["length"] + (1 if entry["start"] == "reset" else 0)
        assert arrays["observations"].shape[0] == rows and int(arrays["life_start"]) == entry["life_start"]
        seqs.extend(([entry["first_seq"]] if entry["start"] == "reset" else []) + arrays["seq"].tolist())
        first_obs_seq = int(arrays["observations"][0, 0])  # the testkit's observations carry their seq
        assert first_obs_seq == entry["first_seq"]
    assert seqs == list(range(1, 2506))  # every event exactly once, in order
    assert meta.episodes[1]["terminated"] is False and meta.episodes[3]["terminated"] is True
    assert not list((tmp_path / sid).glob("*.part"))


def test_a_full_file_left_by_a_crash_is_finished_and_the_run_goes_on(tmp_path: Path) -> None:
    sid = "s-endless"
    run = [reset_event(sid, 1, 0)] + [step_event(sid, 1 + i, 0, i) for i in range(1, 1201)]
    RecordingWriter(tmp_path).process(msgs(started(sid, life=LIFE, endless=True)))
    # killed after making 1,000 steps durable, before finishing their file
    with open(tmp_path / sid / "episode-000000.part", "wb") as part:
        part.writelines(encode_record(e) for e in run[:1001])
    writer = RecordingWriter(tmp_path)
    assert writer.recover() == 1
    assert [e["length"] for e in read_meta(tmp_path, sid).episodes] == [1000]
    counts = writer.process(msgs(*run[990:], closed(sid, last_seq=1201)))
    assert counts["duplicate"] == 11 and counts["written"] == 200
    meta = read_meta(tmp_path, sid)
    assert [(e["length"], e.get("continued", False), e["life_start"]) for e in meta.episodes] == [
        (1000, False, 0), (200, True, 1000)]


def test_an_endless_run_without_a_life_is_cut_too(tmp_path: Path) -> None:
    sid = "s-plain"
    run = [reset_event(sid, 1, 0)] + [step_event(sid, 1 + i, 0, i) for i in range(1, 1002)]
    RecordingWriter(tmp_path).process(msgs(started(sid, endless=True), *run, closed(sid, last_seq=1002)))
    meta = read_meta(tmp_path, sid)
    assert [(e["length"], e.get("continued", False)) for e in meta.episodes] == [(1000, False), (1, True)]
    assert "life_start" not in meta.episodes[0] and meta.life is None


def endless_run(sid: str, steps: int, restarts_after: set[int]) -> list[Any]:
    """An endless run's events as the env host publishes them: a reset, then `steps` steps; the
    steps numbered in `restarts_after` end (terminated) and restart in place: a reset event of the
    next env-host episode right after them (its own seq)."""
    events: list[Any] = [reset_event(sid, 1, 0)]
    episode, episode_step = 0, 0
    for t in range(1, steps + 1):
        episode_step += 1
        ended = t in restarts_after
        events.append(step_event(sid, len(events) + 1, episode, episode_step, reward=float(t), terminated=ended))
        if ended:
            episode, episode_step = episode + 1, 0
            events.append(reset_event(sid, len(events) + 1, episode))
    return events


def test_an_endless_run_keeps_its_restarts_in_place_inside_files_of_1000_steps(tmp_path: Path) -> None:
    sid = "s-endless"
    falls = {23, 40, 999, 1000, 1500, 2001, 2999, 3001, 3400, 3500}  # one at the end of the first file
    run = endless_run(sid, 3500, falls)
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started(sid, life=LIFE, endless=True), *run[:1500]))
    writer = RecordingWriter(tmp_path)  # a restart with the second file open
    writer.recover()
    writer.process(msgs(*run[1400:]))  # redelivered overlap
    writer.process(msgs(closed(sid, last_seq=len(run))))
    meta = read_meta(tmp_path, sid)
    assert [e["length"] for e in meta.episodes] == [1000, 1000, 1000, 500]  # not a file per fall
    assert [e["restarts"] for e in meta.episodes] == [4, 1, 2, 3]
    assert [e["episode"] for e in meta.episodes] == [0, 4, 5, 7]  # the env-host episode each begins in
    assert [e["life_start"] for e in meta.episodes] == [0, 1000, 2000, 3000]
    assert [e["start"] for e in meta.episodes] == ["reset", "none", "none", "none"]
    assert [e.get("continued", False) for e in meta.episodes] == [False, False, True, True]
    assert [e["return"] for e in meta.episodes] == [float(sum(range(1 + 1000 * k, min(1000 * k + 1000, 3500) + 1)))
                                                   for k in range(4)]
    step_seqs = [e.seq for e in run if e.WhichOneof("kind") == "step"]
    seqs: list[int] = []
    for k, entry in enumerate(meta.episodes):
        arrays = load_episode(tmp_path, sid, entry["index"])
        first = 1000 * k + 1  # the run's step of the file's first row
        length = entry["length"]
        restarted = arrays["restarted"]
        assert restarted.dtype == np.bool_ and restarted.shape == (length,)
        assert sorted(first + r for r in np.flatnonzero(restarted)) == sorted(t for t in falls if first <= t < first + length)
        assert not arrays["terminated"].any() and not arrays["truncated"].any()  # restarts report neither...
        assert arrays["final_terminated"].all() and not arrays["final_truncated"].any()  # ... final_* say how it ended
        rows = length + (1 if entry["start"] == "reset" else 0)
        assert arrays["observations"].shape == (rows, 4) and arrays["rewards"].tolist() == list(range(first, first + length))
        obs_seq = arrays["observations"][:, 0].astype(int)  # the testkit's observations carry their seq
        after = obs_seq[1:] if entry["start"] == "reset" else obs_seq
        for r in range(length):  # the row after step r: the new start after a restart, else the step's own
            seq = int(arrays["seq"][r])
            assert after[r] == (seq + 1 if restarted[r] else seq)
        final = arrays["final_observations"][:, 0].astype(int)
        assert final.tolist() == arrays["seq"][restarted].astype(int).tolist()  # the fall as it ended
        seqs.extend(arrays["seq"].tolist())
    assert seqs == step_seqs  # every step exactly once, in order
    assert not list((tmp_path / sid).glob("*.part"))


def test_a_crash_between_a_full_files_last_restart_and_its_reset_keeps_the_reset_in_that_file(tmp_path: Path) -> None:
    sid = "s-endless"
    run = endless_run(sid, 1200, {1000})  # the 1,000th step falls: its reset (seq 1002) belongs to file 0
    RecordingWriter(tmp_path).process(msgs(started(sid, endless=True)))
    with open(tmp_path / sid / "episode-000000.part", "wb") as part:  # killed before the reset came
        part.writelines(encode_record(e) for e in run[:1001])
    writer = RecordingWriter(tmp_path)
    writer.recover()
    assert read_meta(tmp_path, sid).episodes == []  # full, but waiting for its restart's reset
    writer.process(msgs(*run[1001:], closed(sid, last_seq=len(run))))
    meta = read_meta(tmp_path, sid)
    assert [(e["length"], e["restarts"], e["start"], e["episode"]) for e in meta.episodes] == [
        (1000, 1, "reset", 0), (200, 0, "none", 1)]
    first, second = (load_episode(tmp_path, sid, e["index"]) for e in meta.episodes)
    assert np.flatnonzero(first["restarted"]).tolist() == [999] and not second["restarted"].any()
    assert int(first["observations"][-1, 0]) == 1002  # the new start, the reset's observation
    assert int(first["final_observations"][0, 0]) == 1001 and "final_observations" not in second
    assert second["seq"].tolist() == list(range(1003, 1203))
