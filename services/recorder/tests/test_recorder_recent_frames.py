"""RecentFrames: a replay's frame-by-frame requests read an episode's `frames` member once."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from platform_recorder.errors import RecordingNotFoundError
from platform_recorder.reading.recent_frames import RecentFrames
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.storage.folder import FolderStorage
from recorder_testkit import episode_json


def write_episodes(root: Path, sid: str, frames_per_episode: list[list[bytes]]) -> None:
    folder = root / sid
    folder.mkdir(parents=True, exist_ok=True)
    episodes = []
    for index, frames in enumerate(frames_per_episode):
        name = f"episode-{index:06d}.npz"
        np.savez_compressed(folder / name, frames=np.array(frames), rewards=np.ones(len(frames) - 1))
        episodes.append({"index": index, "file": name, "length": len(frames) - 1})
    meta = {"id": sid, "session_id": sid, "env_id": "cartpole", "status": "closed", "episodes": episodes}
    (folder / "meta.json").write_text(json.dumps(meta))


def jpeg(i: int, size: int = 100) -> bytes:
    return b"\xff\xd8" + bytes([i % 256]) * size + b"\xff\xd9"


def frame(store: RecordingStore, sid: str, episode: int, row: int) -> bytes:
    return base64.b64decode(episode_json(store, sid, episode, frames=[row])["frames"][str(row)])


def test_an_episodes_frames_are_read_once_then_served_from_memory(tmp_path: Path) -> None:
    write_episodes(tmp_path, "s-1", [[jpeg(i) for i in range(50)]])
    store = RecordingStore(FolderStorage(tmp_path))
    assert [frame(store, "s-1", 0, row) for row in (0, 49, 7, 7)] == [jpeg(0), jpeg(49), jpeg(7), jpeg(7)]
    assert store.recent_frames.reads == 1


def test_older_episodes_make_room_and_a_file_stored_again_is_read_again(tmp_path: Path) -> None:
    write_episodes(tmp_path, "s-2", [[jpeg(i) for i in range(10)], [jpeg(i + 100) for i in range(10)]])
    store = RecordingStore(FolderStorage(tmp_path))
    store.recent_frames = RecentFrames(max_bytes=1500)  # about one episode's 10 frames of 104 bytes
    assert frame(store, "s-2", 0, 3) == jpeg(3)
    assert frame(store, "s-2", 1, 3) == jpeg(103)  # pushes episode 0 out
    assert frame(store, "s-2", 1, 4) == jpeg(104)
    assert store.recent_frames.reads == 2
    assert frame(store, "s-2", 0, 5) == jpeg(5)
    assert store.recent_frames.reads == 3
    write_episodes(tmp_path, "s-2", [[jpeg(i + 7, 90) for i in range(10)]])  # same name, other content
    assert frame(store, "s-2", 0, 5) == jpeg(12, 90)
    assert store.recent_frames.reads == 4


def test_requests_at_once_share_one_read_and_missing_frames_are_still_named(tmp_path: Path) -> None:
    write_episodes(tmp_path, "s-3", [[jpeg(i) for i in range(200)] + [b""]])
    store = RecordingStore(FolderStorage(tmp_path))
    got: dict[int, bytes] = {}
    threads = [threading.Thread(target=lambda r=row: got.__setitem__(r, frame(store, "s-3", 0, r))) for row in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == {row: jpeg(row) for row in range(8)}
    assert store.recent_frames.reads == 1
    with pytest.raises(RecordingNotFoundError, match="step row 200 has no frame"):
        frame(store, "s-3", 0, 200)
    with pytest.raises(RecordingNotFoundError, match="there is no frame 201"):
        frame(store, "s-3", 0, 201)
