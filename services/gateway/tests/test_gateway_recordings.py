"""The recordings routes against the real recorder API (platform_recorder.reading.recordings_api) serving a folder.

The recordings are written here as files in the documented format (docs/recording-format.md:
meta.json and one .npz per episode); the recorder writing them from a live session is covered
by the recorder's tests and tests/test_e2e_recordings_api.py.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import simplejpeg
from platform_recorder.reading.recordings_api import RecordingsApi
from platform_recorder.storage.folder import FolderStorage
from platform_testing.nats_server import NatsServer

FRAMES = [simplejpeg.encode_jpeg(np.full((8, 8, 3), shade, np.uint8)) for shade in (0, 120, 250)]


def write_recording(root: Path, sid: str, status: str = "closed", created_at: str = "2025-01-01T00:00:00Z",
                    episodes: list[dict[str, np.ndarray]] | None = None, **fields: Any) -> Path:
    """A recording folder: meta.json, and an episode-NNNNNN.npz per dict of arrays."""
    folder = root / sid
    folder.mkdir(parents=True)
    listed = []
    for index, arrays in enumerate(episodes or []):
        name = f"episode-{index:06d}.npz"
        np.savez_compressed(folder / name, **arrays)
        listed.append({"index": index, "file": name, "length": len(arrays.get("rewards", []))})
    meta = {"id": sid, "session_id": sid, "env_id": "cartpole", "created_at": created_at, "status": status,
            "episodes": listed, **fields}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def write_saved_snapshot(root: Path, snapshot_id: str, session_id: str, label: str) -> None:
    folder = root / "snapshots" / snapshot_id
    folder.mkdir(parents=True)
    info = {"id": snapshot_id, "label": label, "session_id": session_id, "env_id": "cartpole",
            "created_at": 1700000000.5, "seq": 2, "size_bytes": 5, "format": "pickle"}
    (folder / "snapshot.json").write_text(json.dumps(info))
    (folder / "state.bin").write_bytes(b"state")


def cartpole_episode() -> dict[str, np.ndarray]:
    return {
        "observations": np.arange(12, dtype=np.float32).reshape(3, 4),
        "actions": np.array([0, 1], dtype=np.int64),
        "rewards": np.array([1.0, np.nan]),
        "terminated": np.array([False, True]),
        "truncated": np.array([False, False]),
        "frames": np.array([FRAMES[0], b"", FRAMES[2]], dtype=bytes),
    }


@pytest.fixture
async def recordings(nats_server: NatsServer, tmp_path: Path) -> AsyncIterator[Path]:
    """The real recordings API on the test's NATS server, serving the folder it yields."""
    import nats

    root = tmp_path / "recordings"
    root.mkdir()
    nc = await nats.connect(nats_server.url)
    api = RecordingsApi(nc, FolderStorage(root))
    await api.start()
    await nc.flush()
    yield root
    await api.stop()
    await nc.drain()


async def test_list_get_and_filters_with_saved_snapshots(gateway, recordings: Path) -> None:
    write_recording(recordings, "s-one", episodes=[cartpole_episode()], created_at="2025-01-02T00:00:00Z")
    write_recording(recordings, "s-vec", num_envs=2)
    for i in (0, 1):
        write_recording(recordings, f"s-vec-{i}", parent_session_id="s-vec", env_index=i, life="robot-1")
    write_recording(recordings, "s-pong", env_id="pong", created_at="2025-01-03T00:00:00Z")
    write_saved_snapshot(recordings, "snap-000000000001", "s-one", "before the fall")

    listed = (await gateway.http.get("/v0/recordings")).json()
    assert listed["count"] == 5 and [r["id"] for r in listed["data"]][:2] == ["s-pong", "s-one"]
    one = listed["data"][1]
    assert one["episode_count"] == 1 and "episodes" not in one
    assert one["saved_snapshots"] == [{"id": "snap-000000000001", "label": "before the fall", "seq": 2,
                                       "created_at": 1700000000.5}]
    by = {}
    for query in ({"env_id": "pong"}, {"session_id": "s-vec"}, {"life": "robot-1"}):
        by[tuple(query.values())] = sorted(r["id"] for r in (await gateway.http.get(
            "/v0/recordings", params=query)).json()["data"])
    assert by == {("pong",): ["s-pong"], ("s-vec",): ["s-vec", "s-vec-0", "s-vec-1"],
                  ("robot-1",): ["s-vec-0", "s-vec-1"]}

    got = await gateway.http.get("/v0/recordings/s-one")
    assert got.status_code == 200 and got.json()["episodes"][0]["length"] == 2
    missing = await gateway.http.get("/v0/recordings/s-nope")
    assert missing.status_code == 404 and missing.json() == {"detail": "recording 's-nope' not found",
                                                             "code": "not_found"}
    for bad in ("..x", "a..b", ".hidden", "a\\b"):
        for method, path in (("GET", ""), ("GET", "/archive"), ("DELETE", ""), ("GET", "/episodes/0")):
            reply = await gateway.http.request(method, f"/v0/recordings/{bad}{path}")
            assert reply.status_code == 422, (method, bad, path, reply.text)
            assert "must not contain '/', '\\' or '..', nor start with '.'" in reply.json()["detail"]
    bad_filter = await gateway.http.get("/v0/recordings", params={"session_id": "../x"})
    assert bad_filter.status_code == 422


async def test_episode_arrays_frames_and_file(gateway, recordings: Path) -> None:
    folder = write_recording(recordings, "s-ep", episodes=[cartpole_episode()])
    base = "/v0/recordings/s-ep/episodes/0"

    episode = (await gateway.http.get(base)).json()
    assert episode["recording_id"] == "s-ep" and episode["index"] == 0 and episode["frame_count"] == 3
    assert episode["episode"] == {"index": 0, "file": "episode-000000.npz", "length": 2}
    assert episode["array_shapes"]["observations"] == {"dtype": "<f4", "shape": [3, 4]}
    assert episode["arrays"] == {}
    with_arrays = (await gateway.http.get(base, params={"arrays": "rewards,terminated"})).json()["arrays"]
    assert with_arrays == {
        "rewards": {"dtype": "<f8", "shape": [2], "data": [1.0, "nan"], "encoding": None},
        "terminated": {"dtype": "|b1", "shape": [2], "data": [False, True], "encoding": None},
    }

    stored = np.load(folder / "episode-000000.npz")
    for name in ("observations", "actions", "rewards", "terminated", "frames"):
        npy = await gateway.http.get(f"{base}/arrays/{name}", params={"format": "npy"})
        assert npy.status_code == 200 and npy.headers["content-type"] == "application/octet-stream"
        loaded = np.load(io.BytesIO(npy.content), allow_pickle=False)
        assert loaded.dtype == stored[name].dtype and loaded.shape == stored[name].shape
        np.testing.assert_array_equal(loaded, stored[name])
    as_json = (await gateway.http.get(f"{base}/arrays/actions")).json()
    assert as_json["data"] == [0, 1] and as_json["dtype"] == "<i8"
    assert (await gateway.http.get(f"{base}/arrays/nope")).status_code == 404
    assert (await gateway.http.get(f"{base}/arrays/actions", params={"format": "csv"})).status_code == 422

    frame = await gateway.http.get(f"{base}/frames/2")
    assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
    assert frame.content == FRAMES[2] and simplejpeg.decode_jpeg(frame.content).shape == (8, 8, 3)
    beyond = await gateway.http.get(f"{base}/frames/3")
    assert beyond.status_code == 404
    assert "frames 0..2 (3 frames); there is no frame 3" in beyond.json()["detail"]
    empty = await gateway.http.get(f"{base}/frames/1")
    assert empty.status_code == 404 and "has no frame" in empty.json()["detail"]

    file = await gateway.http.get(f"{base}/file")
    assert file.status_code == 200 and file.content == (folder / "episode-000000.npz").read_bytes()
    assert file.headers["content-disposition"] == 'attachment; filename="s-ep-episode-000000.npz"'
    for path, status in (("/episodes/1", 404), ("/episodes/1/file", 404), ("/episodes/-1", 422),
                         ("/episodes/0/frames/x", 422)):
        assert (await gateway.http.get(f"/v0/recordings/s-ep{path}")).status_code == status, path


async def test_archive_streams_files_larger_than_a_nats_message(gateway, recordings: Path) -> None:
    big = np.random.default_rng(1).integers(0, 255, (3, 1600, 1600), dtype=np.uint8)  # 7.3 MiB of noise
    folder = write_recording(recordings, "s-big", episodes=[cartpole_episode(), {"frames_rgb": big}])
    (folder / "episode-000002.part").write_bytes(b"an open episode: not in the archive")
    assert (folder / "episode-000001.npz").stat().st_size > 4 * 1024 * 1024

    reply = await gateway.http.get("/v0/recordings/s-big/archive")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/x-tar"
    assert reply.headers["content-disposition"] == 'attachment; filename="s-big.tar"'
    with tarfile.open(fileobj=io.BytesIO(reply.content)) as tar:
        names = tar.getnames()
        contents = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert names == ["s-big/episode-000000.npz", "s-big/episode-000001.npz", "s-big/meta.json"]
    for name, data in contents.items():
        assert data == (recordings / name).read_bytes(), name
    with np.load(io.BytesIO(contents["s-big/episode-000001.npz"])) as untarred:
        np.testing.assert_array_equal(untarred["frames_rgb"], big)

    # a client that stops reading part-way leaves the gateway serving
    async with gateway.http.stream("GET", "/v0/recordings/s-big/archive") as partial:
        async for _ in partial.aiter_bytes():
            break
    again = await gateway.http.get("/v0/recordings/s-big/archive")
    assert again.status_code == 200 and len(again.content) == len(reply.content)


async def test_delete(gateway, recordings: Path) -> None:
    write_recording(recordings, "s-done", episodes=[cartpole_episode()])
    write_recording(recordings, "s-live", status="recording")
    write_saved_snapshot(recordings, "snap-000000000002", "s-done", "kept")

    refused = await gateway.http.delete("/v0/recordings/s-live")
    assert refused.status_code == 409 and refused.json()["code"] == "failed_precondition"
    assert "still being recorded" in refused.json()["detail"]
    assert (recordings / "s-live" / "meta.json").exists()
    deleted = await gateway.http.delete("/v0/recordings/s-done")
    assert deleted.status_code == 204 and deleted.content == b""
    assert not (recordings / "s-done").exists()
    for method, path in (("GET", ""), ("DELETE", ""), ("GET", "/archive"), ("GET", "/episodes/0/file")):
        assert (await gateway.http.request(method, f"/v0/recordings/s-done{path}")).status_code == 404, path
    assert (recordings / "snapshots" / "snap-000000000002" / "snapshot.json").exists(), "saved snapshots stay"


async def test_play_back_data_seeds_totals_world_changes_and_digests(gateway, recordings: Path) -> None:
    from platform_contracts.digests import observation_digest

    dict_episode = {
        "observations.pos": np.arange(6, dtype=np.float32).reshape(3, 2),
        "observations.grip": np.array([0, 1, 1], dtype=np.int64),
        "actions": np.array([0, 1], dtype=np.int64),
        "rewards": np.array([0.5, 2.0]),
    }
    folder = write_recording(recordings, "s-pb", episodes=[cartpole_episode(), dict_episode])
    meta = json.loads((folder / "meta.json").read_text())
    for entry, ret, seed in zip(meta["episodes"], ("nan", 2.5), (7, None)):
        entry.update({"return": ret, "seed": seed, "reset_options": {"level": 1} if seed else None})
    (folder / "meta.json").write_text(json.dumps(meta))
    (folder / "recording.json").write_text(json.dumps({"format": 1, "world_changes": [{"seq": 1, "what": "x"}]}))
    write_recording(recordings, "s-none")

    listed = {r["id"]: r for r in (await gateway.http.get("/v0/recordings")).json()["data"]}
    assert (listed["s-pb"]["step_count"], listed["s-pb"]["total_return"]) == (4, "nan")
    assert (listed["s-none"]["step_count"], listed["s-none"]["total_return"]) == (0, None)

    got = (await gateway.http.get("/v0/recordings/s-pb")).json()
    assert [(e["seed"], e["reset_options"]) for e in got["episodes"]] == [(7, {"level": 1}), (None, None)]
    assert got["world_changes"] == [{"seq": 1, "what": "x"}]
    assert (await gateway.http.get("/v0/recordings/s-none")).json()["world_changes"] == []  # no recording.json

    plain = (await gateway.http.get("/v0/recordings/s-pb/episodes/0/digests")).json()
    assert plain == {"observations": [observation_digest(row) for row in cartpole_episode()["observations"]]}
    nested = (await gateway.http.get("/v0/recordings/s-pb/episodes/1/digests")).json()["observations"]
    assert nested == [observation_digest({"pos": dict_episode["observations.pos"][i], "grip": int(g)})
                      for i, g in enumerate(dict_episode["observations.grip"])]
    missing = await gateway.http.get("/v0/recordings/s-pb/episodes/5/digests")
    assert missing.status_code == 404 and "no finished episode 5" in missing.json()["detail"]
