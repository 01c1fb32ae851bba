"""RecordingStore on a FolderStorage: large files in chunks, manifests, sub-sessions, lives, snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_recorder.errors import InvalidRecordingIdError, InvalidRequestError, RecordingNotFoundError
from platform_recorder.manifest import encode_manifest
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingOpenError, RecordingStore
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from platform_recorder.storage.folder import FolderStorage
from recorder_testkit import episode_json, file_list, summaries
from simulusion.env.v1 import environment_pb2


class ManifestFolderStorage(FolderStorage):
    """A folder read the way an object store is: only what a recording's manifest.json lists."""

    needs_manifest = True


def write_recording(root: Path, sid: str, status: str = "closed", **fields: Any) -> Path:
    folder = root / sid
    folder.mkdir(parents=True)
    meta = {"id": sid, "session_id": sid, "env_id": "CartPole-v1", "created_at": f"2025-01-0{len(sid) % 9}",
            "status": status, "episodes": [], **fields}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_a_file_larger_than_one_read_comes_back_whole_in_4_mib_chunks(tmp_path: Path) -> None:
    folder = write_recording(tmp_path, "big", episodes=[{"index": 0, "file": "episode-000000.npz"}])
    frames = np.random.default_rng(0).integers(0, 255, (3, 1500, 1500), dtype=np.uint8)  # ~6.4 MiB
    np.savez(folder / "episode-000000.npz", frames_rgb=frames, rewards=np.array([1.0, np.inf, -np.inf]))
    (folder / "episode-000001.part").write_bytes(b"open episode")
    store = RecordingStore(FolderStorage(tmp_path))

    files = {f["name"]: f["size"] for f in file_list(store, "big")}
    size = files["episode-000000.npz"]
    assert size > MAX_READ_BYTES and set(files) == {"meta.json", "episode-000000.npz"}
    chunks = [store.read("big", "episode-000000.npz", offset, MAX_READ_BYTES)
              for offset in range(0, size, MAX_READ_BYTES)]
    assert [len(c) for c in chunks] == [MAX_READ_BYTES, size - MAX_READ_BYTES]
    assert b"".join(chunks) == (folder / "episode-000000.npz").read_bytes()
    assert store.read("big", "episode-000000.npz", size, 10) == b""
    with pytest.raises(InvalidRequestError, match="at most 4194304 bytes"):
        store.read("big", "episode-000000.npz", 0, MAX_READ_BYTES + 1)
    with pytest.raises(RecordingNotFoundError, match="no finished file 'episode-000001.part'"):
        store.read("big", "episode-000001.part", 0, 10)

    episode = episode_json(store, "big", 0, arrays=["rewards"])
    assert episode["array_shapes"] == {"frames_rgb": {"dtype": "|u1", "shape": [3, 1500, 1500]},
                                       "rewards": {"dtype": "<f8", "shape": [3]}}
    assert episode["arrays"]["rewards"]["data"] == [1.0, "inf", "-inf"] and episode["frame_count"] == 0
    with pytest.raises(RecordingNotFoundError, match="no JPEG frames"):
        episode_json(store, "big", 0, frames=[0])


def test_on_an_object_store_the_manifest_decides_which_files_exist(tmp_path: Path) -> None:
    folder = write_recording(tmp_path, "s3ish")
    write_recording(tmp_path, "unlisted")  # meta.json written, manifest not yet: not a recording yet
    for index in (0, 1):
        np.savez(folder / f"episode-00000{index}.npz", rewards=np.arange(3.0))
    sizes = {name: (folder / name).stat().st_size for name in ("meta.json", "episode-000000.npz")}
    (folder / "manifest.json").write_bytes(encode_manifest(sizes))
    store = RecordingStore(ManifestFolderStorage(tmp_path))

    assert [f["name"] for f in file_list(store, "s3ish")] == ["episode-000000.npz", "meta.json"]
    assert episode_json(store, "s3ish", 0)["array_names"] == ["rewards"]
    with pytest.raises(RecordingNotFoundError, match="no finished episode 1"):
        episode_json(store, "s3ish", 1)  # on disk, but not (yet) in the manifest: a reader does not trust it
    with pytest.raises(RecordingNotFoundError):
        store.read("s3ish", "episode-000001.npz", 0, 10)
    assert [r["id"] for r in summaries(store)] == ["s3ish"]
    with pytest.raises(RecordingNotFoundError, match="'unlisted' not found"):
        store.read_meta("unlisted")
    with (folder / "meta.json").open("a") as meta:  # replaced by a longer one since the manifest
        meta.write(" " * 10)
    assert store.read("s3ish", "meta.json", 0, MAX_READ_BYTES) == (folder / "meta.json").read_bytes()


def test_listing_sub_sessions_lives_and_saved_snapshots(tmp_path: Path) -> None:
    write_recording(tmp_path, "vec", num_envs=2)
    for index in (0, 1):
        write_recording(tmp_path, f"vec-{index}", parent_session_id="vec", env_index=index, life="robot-1")
    write_recording(tmp_path, "vector", episodes=[{"index": 0}, {"index": 1}])  # "vec" is only a prefix of it
    write_recording(tmp_path, "live", status="recording", env_id="Pong")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "no-meta-yet").mkdir()
    saved = SavedSnapshotStore(tmp_path)
    first = environment_pb2.SavedSnapshot(env_id="Pong", session_id="live", created_at=1.0)
    older = saved.save(first, b"s", "x")
    newer = saved.save(environment_pb2.SavedSnapshot(env_id="Pong", session_id="live", created_at=2.0,
                                                     label="later"), b"s", "x")
    store = RecordingStore(FolderStorage(tmp_path))

    everything = summaries(store)
    assert sorted(r["id"] for r in everything) == ["live", "vec", "vec-0", "vec-1", "vector"]
    assert next(r for r in everything if r["id"] == "vector")["episode_count"] == 2
    assert [r["id"] for r in summaries(store, session_id="vec")] == ["vec-1", "vec-0", "vec"]
    assert sorted(r["id"] for r in summaries(store, life="robot-1")) == ["vec-0", "vec-1"]
    assert [r["id"] for r in summaries(store, env_id="Pong")] == ["live"]
    live = summaries(store, env_id="Pong")[0]
    assert [(s["id"], s["label"]) for s in live["saved_snapshots"]] == [(newer.id, "later"), (older.id, "")]
    with pytest.raises(InvalidRecordingIdError, match="nor start with '.'"):
        summaries(store, session_id=".hidden")

    with pytest.raises(RecordingOpenError, match="still being recorded"):
        store.delete("live")
    assert store.delete("vec") == 1 and not (tmp_path / "vec").exists()
    assert (tmp_path / "vec-0" / "meta.json").exists(), "a sub-session's recording is deleted by its own id"
    with pytest.raises(RecordingNotFoundError):
        store.read_meta("vec")
    with pytest.raises(RecordingNotFoundError):
        store.read_meta("no-meta-yet")
