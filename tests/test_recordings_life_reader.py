"""`platform_sdk.recordings.LifeReader` (a cross-package test: the SDK's reader) on recordings the
recorder wrote (its RecordingWriter, fed the events an env host publishes) and on folders laid
out by hand as docs/recording-format.md says."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import simplejpeg
from platform_contracts import subjects
from platform_contracts.values import tensor_from_array
from platform_sdk import PlatformWarning
from platform_sdk.recordings import (
    EpisodeFolder,
    LifeEpisode,
    LifeReader,
    LifeSession,
    ThinnedRecordingError,
)
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb
from simulusion.session.v1.options_pb2 import SessionOptions

LIFE = "robot-1"


def jpeg(value: int) -> bytes:
    return simplejpeg.encode_jpeg(np.full((8, 8, 3), value, dtype=np.uint8), quality=95, colorspace="RGB")


def frame(seq: int) -> env_pb.Frame:
    """A frame whose gray level tells the event it belongs to (seq * 10)."""
    return env_pb.Frame(encoding="jpeg", width=8, height=8, data=jpeg(10 * seq))


def obs(seq: int) -> pb.Value:
    return pb.Value(tensor=tensor_from_array(np.array([seq, 0.0, 0.0, 0.0], dtype=np.float32)))


def spec() -> env_pb.SpecResponse:
    box = pb.BoxSpace(low=tensor_from_array(-np.ones(4, np.float32)), high=tensor_from_array(np.ones(4, np.float32)))
    return env_pb.SpecResponse(env_id="CartPole-v1", observation_space=pb.Space(box=box),
                               action_space=pb.Space(discrete=pb.DiscreteSpace(n=2, dtype="int64")))


def lifecycle(sid: str, kind: int, frame_every: int = 0, last_seq: int = 0) -> events_pb2.SessionEvent:
    options = SessionOptions(env_id="CartPole-v1", record=True, record_frames=True)
    if kind == events_pb2.SESSION_EVENT_KIND_STARTED:
        options.life, options.frame_every = LIFE, frame_every
    return events_pb2.SessionEvent(session_id=sid, kind=kind, options=options, host_id="h1", time=time.time(),
                                   spec=spec(), last_seq=last_seq)


def episode(sid: str, first_seq: int, number: int, steps: int, ends: bool) -> list[events_pb2.StepEvent]:
    """A reset then `steps` steps with frames, the last terminated when `ends`."""
    reset = events_pb2.StepEvent(session_id=sid, seq=first_seq, episode=number, episode_step=0, time=time.time())
    reset.reset.CopyFrom(env_pb.ResetResponse(observation=obs(first_seq), frame=frame(first_seq)))
    out = [reset]
    for i in range(1, steps + 1):
        seq = first_seq + i
        result = env_pb.StepResponse(observation=obs(seq), reward=float(seq), terminated=ends and i == steps,
                                     frame=frame(seq))
        out.append(events_pb2.StepEvent(session_id=sid, seq=seq, episode=number, episode_step=i, time=time.time(),
                                        step=events_pb2.StepTransition(action=pb.Value(discrete=i % 2),
                                                                       result=result)))
    return out


def record_life(root: Path, frame_every: int) -> None:
    """Two sessions of the life, recorded by the recorder's writer (a restart between them):
    s1: episode 0 (3 steps, ended), episode 1 (2 steps, open at the close); s2: one of 4 steps."""
    from platform_recorder.writing.writer import RecordingWriter  # the recorder itself writes the files

    def subject(event: object) -> str:
        sid = event.session_id  # type: ignore[attr-defined]
        return subjects.session_steps(sid) if isinstance(event, events_pb2.StepEvent) else subjects.session_lifecycle(sid)

    sessions = {
        "s1": [*episode("s1", 1, 0, 3, True), *episode("s1", 5, 1, 2, False)],
        "s2": episode("s2", 1, 0, 4, False),
    }
    for sid, events in sessions.items():
        started = lifecycle(sid, events_pb2.SESSION_EVENT_KIND_STARTED, frame_every)
        close = lifecycle(sid, events_pb2.SESSION_EVENT_KIND_CLOSED, last_seq=events[-1].seq)
        RecordingWriter(root).process([(subject(e), e.SerializeToString()) for e in (started, *events, close)])


def gray(image: np.ndarray) -> int:
    return round(float(image.mean()))


def test_a_thinned_life_read_in_order(tmp_path: Path) -> None:
    record_life(tmp_path, frame_every=2)
    life = LifeReader(tmp_path, LIFE)
    assert (life.total_steps, life.frame_every, life.max_frames) == (9, 2, 0)
    assert [(s["session_id"], s["first_step"], s["steps"]) for s in life.sessions] == [("s1", 0, 5), ("s2", 5, 4)]
    episodes = list(life.episodes())
    assert all(isinstance(e, LifeEpisode) for e in episodes)
    assert [(e.session_id, e.index, e.life_start, e.length) for e in episodes] == [
        ("s1", 0, 0, 3), ("s1", 1, 3, 2), ("s2", 0, 5, 4)]
    assert episodes[2]["rewards"].tolist() == [2.0, 3.0, 4.0, 5.0]  # every step kept
    assert episodes[2]["observations"].shape == (5, 4)
    assert episodes[2].row_steps().tolist() == [5, 6, 7, 8, 9]
    # frames: the life's first reset row, then the even life steps; a reset row later in the life
    # shares its step with the step before it and is not kept
    assert [e.frame_steps.tolist() for e in episodes] == [[0, 2], [4], [6, 8]]
    frames = list(life.frames())
    assert [step for step, _ in frames] == [0, 2, 4, 6, 8]
    # each frame is the one of its event: s1 seq 1, 3 (step 2), 6 (step 4); s2 seq 2 (step 6), 4 (step 8)
    assert [gray(image) for _, image in frames] == [10, 30, 60, 20, 40]
    assert frames[0][1].shape == (8, 8, 3) and frames[0][1].dtype == np.uint8
    with pytest.raises(ThinnedRecordingError, match="LifeReader"):
        EpisodeFolder(tmp_path / "s1")
    assert isinstance(life.session("s2"), LifeSession) and len(life.session("s2")) == 1
    with pytest.raises(KeyError, match="not in life"):
        life.session("s9")


def test_a_life_without_thinning_gives_a_frame_per_row(tmp_path: Path) -> None:
    record_life(tmp_path, frame_every=0)
    life = LifeReader(tmp_path, LIFE)
    steps = [step for step, _ in life.frames()]
    # every observation row: an episode's end and the next reset share a life step
    assert steps == [0, 1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 9]
    assert len(EpisodeFolder(tmp_path / "s2")) == 1  # unthinned: EpisodeFolder reads it too
    assert int(EpisodeFolder(tmp_path / "s2")[0]["life_start"]) == 5


def write_session(root: Path, sid: str, entries: list[dict], arrays: list[dict[str, np.ndarray]]) -> None:
    folder = root / sid
    folder.mkdir(parents=True)
    for entry, content in zip(entries, arrays):
        np.savez_compressed(folder / entry["file"], **content)
    meta = {"session_id": sid, "status": "closed", "num_envs": 1, "life": LIFE, "frame_every": 0,
            "max_frames": 0, "episodes": entries}
    (folder / "meta.json").write_text(json.dumps(meta))


def test_continued_files_of_an_endless_run_and_missing_sessions(tmp_path: Path) -> None:
    def rows(n: int) -> dict[str, np.ndarray]:
        return {"observations": np.zeros((n, 4), np.float32), "rewards": np.ones(n)}

    entries = [
        {"index": 0, "file": "episode-000000.npz", "length": 3, "start": "reset", "life_start": 0},
        {"index": 1, "file": "episode-000001.npz", "length": 2, "start": "none", "continued": True,
         "life_start": 3},
    ]
    write_session(tmp_path, "s1", entries, [{**rows(4), "frames": np.array([jpeg(i * 40) for i in range(4)])},
                                            {**rows(2), "frames": np.array([jpeg(200), b""])}])
    index = {"format": 1, "name": LIFE, "frame_every": 0, "max_frames": 0, "total_steps": 9, "sessions": [
        {"session_id": "s1", "first_step": 0, "steps": 5, "status": "closed"},
        {"session_id": "gone", "first_step": 5, "steps": 4, "status": "closed"}]}
    (tmp_path / "lives").mkdir()
    (tmp_path / "lives" / f"{LIFE}.json").write_text(json.dumps(index))
    with pytest.warns(PlatformWarning, match="session gone of the life has no recording folder"):
        life = LifeReader(tmp_path, LIFE)
    assert len(life.notes) == 1
    first, second = life.episodes()
    assert not first.continued and second.continued
    assert first.row_steps().tolist() == [0, 1, 2, 3] and second.row_steps().tolist() == [4, 5]
    assert [(step, gray(image)) for step, image in life.frames()] == [(0, 0), (1, 40), (2, 80), (3, 120), (4, 200)]


def test_a_missing_life_names_the_lives_there(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no life 'robot-1' .* it has none"):
        LifeReader(tmp_path, LIFE)
    (tmp_path / "lives").mkdir()
    (tmp_path / "lives" / "arm.json").write_text(json.dumps({"name": "arm", "sessions": []}))
    with pytest.raises(FileNotFoundError, match="it has arm"):
        LifeReader(tmp_path, LIFE)
    with pytest.raises(FileNotFoundError, match="S3 location"):
        LifeReader("s3://bucket/recordings", LIFE)


def test_the_recordings_exports_are_pinned() -> None:
    from platform_sdk import recordings

    assert set(recordings.__all__) == {
        "Episode", "EpisodeFolder", "LifeEpisode", "LifeReader", "LifeSession", "ThinnedRecordingError",
        "PlayBack", "PlayBackError", "PlayedStep", "RecordingNotFoundError", "play_back"}
