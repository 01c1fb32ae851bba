"""platform_sdk.recordings: EpisodeFolder and Episode on recording folders laid out as
docs/recording-format.md says (files made here with NumPy; tests/test_e2e_recording_reader.py
reads folders the recorder wrote)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import simplejpeg
from platform_sdk import PlatformWarning
from platform_sdk.recordings import Episode, EpisodeFolder, ThinnedRecordingError


def jpeg(value: int) -> bytes:
    image = np.full((6, 8, 3), value, dtype=np.uint8)
    image[0, 0] = (255, 0, 0)
    return simplejpeg.encode_jpeg(image, quality=95, colorspace="RGB")


def write_episode(folder: Path, index: int, steps: int, **extra: np.ndarray) -> dict[str, Any]:
    arrays = {
        "observations": np.arange((steps + 1) * 4, dtype=np.float32).reshape(steps + 1, 4) + index,
        "actions": np.arange(steps, dtype=np.int64) % 2,
        "rewards": np.full(steps, 1.0 + index),
        "terminated": np.arange(steps) == steps - 1,
        "truncated": np.zeros(steps, dtype=bool),
        "seq": np.arange(1, steps + 1, dtype=np.uint64),
        **extra,
    }
    name = f"episode-{index:06d}.npz"
    np.savez_compressed(folder / name, **arrays)
    return {"index": index, "file": name, "length": steps, "return": float(arrays["rewards"].sum())}


def write_meta(folder: Path, episodes: list[dict[str, Any]], **fields: Any) -> None:
    meta = {"session_id": folder.name, "env_id": "cartpole", "status": "closed", "num_envs": 1,
            "episodes": episodes, "agent_keys": ["confidence"], **fields}
    (folder / "meta.json").write_text(json.dumps(meta))


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    folder = tmp_path / "s-1"
    folder.mkdir()
    frames = np.array([jpeg(10), b"", jpeg(200), jpeg(90)], dtype=bytes)
    confidence = np.array([0.5, np.nan, 0.25])
    episodes = [
        write_episode(folder, 0, 3, frames=frames, **{"agent.confidence": confidence}),
        write_episode(folder, 1, 2),
    ]
    write_meta(folder, episodes)
    return folder


def test_episodes_in_order_with_their_arrays(recording: Path) -> None:
    folder = EpisodeFolder(recording)
    assert len(folder) == 2 and folder.agent_keys == ["confidence"]
    assert [e["index"] for e in folder.episodes] == [0, 1] and folder.meta["env_id"] == "cartpole"
    first, second = folder[0], folder[-1]
    assert isinstance(first, Episode) and first.index == 0 and second.index == 1
    assert first.length == 3 and first["observations"].shape == (4, 4)
    assert first["actions"].tolist() == [0, 1, 0] and first["actions"].dtype == np.int64
    assert second["rewards"].tolist() == [2.0, 2.0]
    np.testing.assert_array_equal(first["agent.confidence"], [0.5, np.nan, 0.25])
    assert "frames" in first and "frames" not in second
    assert first.names == sorted(first.names) and "agent.confidence" in first.names
    assert sorted(dict(first)) == first.names
    assert [e.index for e in folder] == [0, 1]
    assert folder.recording is None


def test_arrays_load_one_by_one_on_first_access(recording: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    original = np.lib.npyio.NpzFile.__getitem__

    def spy(self: Any, key: str) -> Any:
        read.append(key)
        return original(self, key)

    monkeypatch.setattr(np.lib.npyio.NpzFile, "__getitem__", spy)
    episode = EpisodeFolder(recording)[0]
    assert read == [], "opening an episode reads only its array names"
    episode["rewards"]
    episode["rewards"]
    assert read == ["rewards"], "one array read once"
    assert episode.frame_count == 4 and read == ["rewards"], "frame_count reads the frames' header only"


def test_frames_decode_to_rgb(recording: Path) -> None:
    episode = EpisodeFolder(recording)[0]
    assert episode.frame_count == 4
    frame = episode.frames(2)
    assert frame.dtype == np.uint8 and frame.shape == (6, 8, 3)
    np.testing.assert_array_equal(frame, simplejpeg.decode_jpeg(jpeg(200), colorspace="RGB"))
    np.testing.assert_array_equal(episode.frames(-1), simplejpeg.decode_jpeg(jpeg(90), colorspace="RGB"))
    with pytest.raises(ValueError, match="row 1 has no frame"):
        episode.frames(1)
    with pytest.raises(IndexError, match="frame 4 is out of range"):
        episode.frames(4)
    second = EpisodeFolder(recording)[1]
    assert second.frame_count == 0
    with pytest.raises(LookupError, match="recorded without record_frames"):
        second.frames(0)


def test_raw_rgb_frames(tmp_path: Path) -> None:
    rgb = np.random.default_rng(0).integers(0, 255, (3, 5, 4, 3), dtype=np.uint8)
    write_meta(tmp_path, [write_episode(tmp_path, 0, 2, frames_rgb=rgb)])
    episode = EpisodeFolder(tmp_path)[0]
    assert episode.frame_count == 3
    np.testing.assert_array_equal(episode.frames(1), rgb[1])


def test_unknown_array_names_what_there_is(recording: Path) -> None:
    with pytest.raises(KeyError, match="has no array 'teacher.action'; it has actions, agent.confidence"):
        EpisodeFolder(recording)[0]["teacher.action"]


def test_open_and_failed_episodes_are_skipped_with_a_note(recording: Path) -> None:
    (recording / "episode-000002.part").write_bytes(b"\x05\x00\x00\x00hello")
    (recording / "episode-000003.failed.part").write_bytes(b"")
    meta = json.loads((recording / "meta.json").read_text())
    meta["episodes"].append({"index": 3, "file": None, "error": "ValueError: bad rows"})
    (recording / "meta.json").write_text(json.dumps(meta))
    with pytest.warns(PlatformWarning) as caught:
        folder = EpisodeFolder(recording)
    assert len(folder) == 2 and [e["index"] for e in folder.episodes] == [0, 1]
    message = str(caught[0].message)
    assert "episode(s) 2 still open (.part files), skipped until finished" in message
    assert "episode 3 failed to build and is left out (ValueError: bad rows)" in message
    assert folder.notes and all(note in message for note in folder.notes)


def test_a_part_file_of_a_listed_episode_is_no_open_episode(recording: Path) -> None:
    (recording / "episode-000001.part").write_bytes(b"")  # meta.json lists it; the part goes next
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folder = EpisodeFolder(recording)
    assert folder.notes == [] and len(folder) == 2


def test_vector_parent_says_where_its_episodes_are(tmp_path: Path) -> None:
    write_meta(tmp_path, [], num_envs=4, session_id="s-v")
    with pytest.warns(PlatformWarning, match="its episodes are in the recordings s-v-<i>"):
        assert len(EpisodeFolder(tmp_path)) == 0


@pytest.mark.parametrize("fields", [{"frame_every": 4}, {"max_frames": 20000}])
def test_thinned_recordings_point_to_the_life_reader(tmp_path: Path, fields: dict[str, int]) -> None:
    write_meta(tmp_path, [write_episode(tmp_path, 0, 2)], **fields)
    with pytest.raises(ThinnedRecordingError, match="platform_sdk.recordings.LifeReader") as caught:
        EpisodeFolder(tmp_path)
    key, value = next(iter(fields.items()))
    assert f"{key}={value}" in str(caught.value) and str(tmp_path) in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_an_episode_with_frame_steps_points_to_the_life_reader(tmp_path: Path) -> None:
    entry = write_episode(tmp_path, 0, 4, frames=np.array([jpeg(1), jpeg(2)]), frame_steps=np.array([0, 4]))
    write_meta(tmp_path, [entry], frame_every=1)  # 1: every frame kept, no thinning said in meta
    folder = EpisodeFolder(tmp_path)
    with pytest.raises(ThinnedRecordingError, match="holds 'frame_steps'.*LifeReader"):
        folder[0]


def test_missing_folder_meta_or_file_are_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"no recording folder at {tmp_path / 'nope'}"):
        EpisodeFolder(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match=f"{tmp_path} is not a recording folder: it holds no meta.json"):
        EpisodeFolder(tmp_path)
    with pytest.raises(FileNotFoundError, match="s3://bucket/rec is an S3 location"):
        EpisodeFolder("s3://bucket/rec")
    write_meta(tmp_path, [{"index": 0, "file": "episode-000000.npz", "length": 1}])
    folder = EpisodeFolder(tmp_path)
    with pytest.raises(FileNotFoundError, match="episode-000000.npz: listed in meta.json, missing"):
        folder[0]
    with pytest.raises(IndexError, match="has 1 finished episodes, not 1"):
        folder[1]


def test_a_copy_with_a_manifest_reads_only_the_episodes_it_lists(recording: Path) -> None:
    files = [{"name": "meta.json", "size": 1}, {"name": "episode-000000.npz", "size": 1}]
    (recording / "manifest.json").write_text(json.dumps({"format": 1, "files": files}))
    with pytest.warns(PlatformWarning, match=r"episode\(s\) 1 not in manifest.json"):
        folder = EpisodeFolder(recording)
    assert len(folder) == 1 and folder[0].index == 0


def test_a_long_recording_s_sealed_episode_lists_are_read_first(tmp_path: Path) -> None:
    """meta.json's `episode_lists` name the files of its first entries (docs/recording-format.md)."""
    folder = tmp_path / "s-long"
    folder.mkdir()
    entries = [write_episode(folder, index, 2) for index in range(7)]
    (folder / "episodes-000000.json").write_text(json.dumps(entries[:3]))
    (folder / "episodes-000001.json").write_text(json.dumps(entries[3:6]))
    write_meta(folder, entries[6:], episode_lists=["episodes-000000.json", "episodes-000001.json"])
    episodes = EpisodeFolder(folder)
    assert [e.index for e in episodes] == list(range(7)) and len(episodes.meta["episodes"]) == 7
    assert "episode_lists" not in episodes.meta
    (folder / "episodes-000001.json").unlink()
    with pytest.raises(FileNotFoundError, match="names the episode list episodes-000001.json"):
        EpisodeFolder(folder)
