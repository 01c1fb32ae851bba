"""The recordings routes against the recorder's contract (simulusion.recorder.v1), answered by a
stand-in recorder over the test's NATS server (recorder_stand_in).

What the recorder reads from its files is covered by the recorder's tests and, through the
gateway, by tests/test_e2e_recordings_api.py; here: the gateway asks with the contract's messages
and gives the REST answers (docs/recording-format.md, "What the API adds") from the replies.
"""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
import simplejpeg
from platform_contracts import subjects
from recorder_stand_in import StandInRecorder, StoredEpisode, StoredRecording, meta
from simulusion.recorder.v1 import recorder_pb2 as rec

FRAMES = [simplejpeg.encode_jpeg(np.full((8, 8, 3), shade, np.uint8)) for shade in (0, 120, 250)]


def cartpole_episode() -> dict[str, np.ndarray]:
    return {
        "observations": np.arange(12, dtype=np.float32).reshape(3, 4),
        "actions": np.array([0, 1], dtype=np.int64),
        "rewards": np.array([1.0, np.nan]),
        "terminated": np.array([False, True]),
        "truncated": np.array([False, False]),
        "frames": np.array([FRAMES[0], b"", FRAMES[2]], dtype=bytes),
    }


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def entry(index: int, length: int = 2, **more: object) -> dict[str, object]:
    return {"index": index, "file": f"episode-{index:06d}.npz", "length": length, **more}


@pytest.fixture
def recorder(stand_in_recorder: StandInRecorder) -> StandInRecorder:
    return stand_in_recorder


async def test_list_get_and_filters_with_saved_snapshots(gateway, recorder: StandInRecorder) -> None:
    snapshot = rec.SavedSnapshotRef(id="snap-000000000001", label="before the fall", seq=2, created_at=1700000000.5)
    recorder.add(StoredRecording(meta(
        "s-one", episodes=[entry(0, **{"return": 2.5})], created_at="2025-01-02T00:00:00Z", host_id=None,
        kwargs={"x": 1}, future_member={"kept": True}), saved_snapshots=[snapshot]))
    recorder.add(StoredRecording(meta("s-pong", env_id="pong", life="robot-1", num_envs=1)))

    listed = (await gateway.http.get("/v0/recordings")).json()
    assert listed["count"] == 2 and [r["id"] for r in listed["data"]] == ["s-one", "s-pong"]
    one = listed["data"][0]
    assert "episodes" not in one and (one["episode_count"], one["step_count"], one["total_return"]) == (1, 2, 2.5)
    assert one["saved_snapshots"] == [{"id": "snap-000000000001", "label": "before the fall", "seq": 2,
                                       "created_at": 1700000000.5}]
    # every member of meta.json comes through as it was: null, objects, members the gateway does not know
    assert (one["host_id"], one["kwargs"], one["future_member"]) == (None, {"x": 1}, {"kept": True})
    assert "life" in listed["data"][1] and listed["data"][1]["num_envs"] == 1

    for query in ({"env_id": "pong"}, {"session_id": "s-vec"}, {"life": "robot-1"}):
        await gateway.http.get("/v0/recordings", params=query)
    asked = recorder.requests[subjects.RECORDER_LIST_RECORDINGS][-3:]
    assert [(r.env_id, r.session_id, r.life) for r in asked] == [
        ("pong", "", ""), ("", "s-vec", ""), ("", "", "robot-1")]

    got = await gateway.http.get("/v0/recordings/s-one")
    assert got.status_code == 200
    body = got.json()
    assert body["episodes"] == [{**entry(0), "return": 2.5, "seed": None, "reset_options": None}]
    assert (body["world_changes"], body["spec"], body["future_member"]) == ([], None, {"kept": True})
    missing = await gateway.http.get("/v0/recordings/s-nope")
    assert missing.status_code == 404 and missing.json() == {"detail": "recording 's-nope' not found",
                                                             "code": "not_found"}
    asked_before = sum(len(v) for v in recorder.requests.values())
    for bad in ("..x", "a..b", ".hidden", "a\\b"):
        for method, path in (("GET", ""), ("GET", "/archive"), ("DELETE", ""), ("GET", "/episodes/0")):
            reply = await gateway.http.request(method, f"/v0/recordings/{bad}{path}")
            assert reply.status_code == 422, (method, bad, path, reply.text)
            assert "must not contain '/', '\\' or '..', nor start with '.'" in reply.json()["detail"]
    assert sum(len(v) for v in recorder.requests.values()) == asked_before, "refused before asking the recorder"
    bad_filter = await gateway.http.get("/v0/recordings", params={"session_id": "../x"})  # the recorder refuses it
    assert bad_filter.status_code == 422 and bad_filter.json()["code"] == "invalid_argument"


async def test_episode_arrays_frames_and_file(gateway, recorder: StandInRecorder) -> None:
    arrays = cartpole_episode()
    npz = npz_bytes(arrays)
    recorder.add(StoredRecording(
        meta("s-ep", episodes=[entry(0)]), files={"meta.json": b"{}", "episode-000000.npz": npz},
        episodes={0: StoredEpisode(arrays, frames={0: FRAMES[0], 2: FRAMES[2]}, frame_count=3)}))
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
    assert list(recorder.requests[subjects.RECORDER_EPISODE][-1].arrays) == ["rewards", "terminated"]

    for name in ("observations", "actions", "rewards", "terminated", "frames"):
        npy = await gateway.http.get(f"{base}/arrays/{name}", params={"format": "npy"})
        assert npy.status_code == 200 and npy.headers["content-type"] == "application/octet-stream"
        loaded = np.load(io.BytesIO(npy.content), allow_pickle=False)
        assert loaded.dtype == arrays[name].dtype and loaded.shape == arrays[name].shape
        np.testing.assert_array_equal(loaded, arrays[name])
    as_json = (await gateway.http.get(f"{base}/arrays/actions")).json()
    assert as_json["data"] == [0, 1] and as_json["dtype"] == "<i8"
    frames_json = (await gateway.http.get(f"{base}/arrays/frames")).json()
    assert frames_json["encoding"] == "base64" and len(frames_json["data"]) == 3 and frames_json["data"][1] == ""
    assert (await gateway.http.get(f"{base}/arrays/nope")).status_code == 404
    assert (await gateway.http.get(f"{base}/arrays/actions", params={"format": "csv"})).status_code == 422

    frame = await gateway.http.get(f"{base}/frames/2")
    assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
    assert frame.content == FRAMES[2] and simplejpeg.decode_jpeg(frame.content).shape == (8, 8, 3)
    assert list(recorder.requests[subjects.RECORDER_EPISODE][-1].frames) == [2]
    beyond = await gateway.http.get(f"{base}/frames/3")
    assert beyond.status_code == 404
    assert "frames 0..2 (3 frames); there is no frame 3" in beyond.json()["detail"]
    empty = await gateway.http.get(f"{base}/frames/1")
    assert empty.status_code == 404 and "has no frame" in empty.json()["detail"]

    file = await gateway.http.get(f"{base}/file")
    assert file.status_code == 200 and file.content == npz
    assert file.headers["content-disposition"] == 'attachment; filename="s-ep-episode-000000.npz"'
    huge = 2**70  # more than a request message holds: no such episode or frame
    for path, status in (("/episodes/1", 404), ("/episodes/1/file", 404), ("/episodes/-1", 422),
                         ("/episodes/0/frames/x", 422), (f"/episodes/{huge}", 404), (f"/episodes/0/frames/{huge}", 404),
                         (f"/episodes/{huge}/digests", 404), (f"/episodes/{huge}/arrays/rewards", 404)):
        assert (await gateway.http.get(f"/v0/recordings/s-ep{path}")).status_code == status, path


async def test_archive_streams_files_larger_than_a_nats_message(gateway, recorder: StandInRecorder) -> None:
    big = np.random.default_rng(1).integers(0, 255, (3, 1600, 1600), dtype=np.uint8)  # 7.3 MiB of noise
    files = {"meta.json": b'{"id": "s-big"}', "episode-000000.npz": npz_bytes(cartpole_episode()),
             "episode-000001.npz": npz_bytes({"frames_rgb": big})}
    assert len(files["episode-000001.npz"]) > 4 * 1024 * 1024
    recorder.add(StoredRecording(meta("s-big"), files=files))

    reply = await gateway.http.get("/v0/recordings/s-big/archive")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/x-tar"
    assert reply.headers["content-disposition"] == 'attachment; filename="s-big.tar"'
    with tarfile.open(fileobj=io.BytesIO(reply.content)) as tar:
        names = tar.getnames()
        contents = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert names == ["s-big/episode-000000.npz", "s-big/episode-000001.npz", "s-big/meta.json"]
    for name, data in contents.items():
        assert data == files[name.removeprefix("s-big/")], name
    reads = recorder.requests[subjects.RECORDER_READ_FILE]
    assert max(r.length for r in reads) <= 4 * 1024 * 1024 and len(reads) > len(files)  # in chunks

    # a client that stops reading part-way leaves the gateway serving
    async with gateway.http.stream("GET", "/v0/recordings/s-big/archive") as partial:
        async for _ in partial.aiter_bytes():
            break
    again = await gateway.http.get("/v0/recordings/s-big/archive")
    assert again.status_code == 200 and len(again.content) == len(reply.content)


async def test_delete(gateway, recorder: StandInRecorder) -> None:
    recorder.add(StoredRecording(meta("s-done"), files={"meta.json": b"{}"}))
    recorder.add(StoredRecording(meta("s-live", status="recording")))

    refused = await gateway.http.delete("/v0/recordings/s-live")
    assert refused.status_code == 409 and refused.json()["code"] == "failed_precondition"
    assert "still being recorded" in refused.json()["detail"]
    deleted = await gateway.http.delete("/v0/recordings/s-done")
    assert deleted.status_code == 204 and deleted.content == b""
    assert [r.id for r in recorder.requests[subjects.RECORDER_DELETE_RECORDING]] == ["s-live", "s-done"]
    for method, path in (("GET", ""), ("DELETE", ""), ("GET", "/archive"), ("GET", "/episodes/0/file")):
        assert (await gateway.http.request(method, f"/v0/recordings/s-done{path}")).status_code == 404, path


async def test_play_back_data_seeds_totals_world_changes_and_digests(gateway, recorder: StandInRecorder) -> None:
    episodes = [entry(0, **{"return": "nan", "seed": 7, "reset_options": {"level": 1}}),
                entry(1, **{"return": 2.5, "seed": None, "reset_options": None})]
    recorder.add(StoredRecording(
        meta("s-pb", episodes=episodes), world_changes=[{"seq": 1, "what": "x"}],
        spec={"metadata": {"control_rate": 50.0}},
        episodes={0: StoredEpisode(cartpole_episode())}))
    recorder.add(StoredRecording(meta("s-none")))

    listed = {r["id"]: r for r in (await gateway.http.get("/v0/recordings")).json()["data"]}
    assert (listed["s-pb"]["step_count"], listed["s-pb"]["total_return"]) == (4, "nan")
    assert (listed["s-none"]["step_count"], listed["s-none"]["total_return"]) == (0, None)

    got = (await gateway.http.get("/v0/recordings/s-pb")).json()
    assert [(e["seed"], e["reset_options"], e["return"]) for e in got["episodes"]] == [
        (7, {"level": 1}, "nan"), (None, None, 2.5)]
    assert got["world_changes"] == [{"seq": 1, "what": "x"}]
    assert got["spec"] == {"metadata": {"control_rate": 50.0}}
    assert (await gateway.http.get("/v0/recordings/s-none")).json()["world_changes"] == []

    digests = (await gateway.http.get("/v0/recordings/s-pb/episodes/0/digests")).json()
    assert digests == {"observations": ["digest-0", "digest-1", "digest-2"]}
    missing = await gateway.http.get("/v0/recordings/s-pb/episodes/5/digests")
    assert missing.status_code == 404 and "no finished episode 5" in missing.json()["detail"]
