"""The recordings NATS API, served by the real recorder from what it recorded itself."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from platform_contracts import subjects
from recorder_testkit import (
    ask,
    closed,
    dict_spec,
    publish,
    read_file,
    read_meta,
    reset_event,
    started,
    step_event,
    wait_drained,
    wait_for,
)
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2

JPEG = b"\xff\xd8\xff\xe0fake jpeg\xff\xd9"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


read = read_file


async def record_one_episode_with_frames(js: Any, sid: str) -> None:
    """A closed recording: one terminated episode of 3 steps, frames on rows 0 and 2."""
    await publish(js, started(sid))
    await publish(js, reset_event(sid, 1, 0, frame=JPEG))
    await publish(js, step_event(sid, 2, 0, 1))
    await publish(js, step_event(sid, 3, 0, 2, frame=JPEG + b"2"))
    await publish(js, step_event(sid, 4, 0, 3, reward=float("nan"), terminated=True))
    await publish(js, closed(sid, last_seq=4))


async def save_snapshot(nc: Any, session_id: str, label: str) -> str:
    snapshot = environment_pb2.SavedSnapshot(env_id="CartPole-v1", session_id=session_id, label=label, seq=3)
    request = control_pb2.SaveSnapshotRequest(snapshot=snapshot, state=b"state", format="pickle")
    reply = await nc.request(subjects.RECORDER_SAVE_SNAPSHOT, request.SerializeToString(), timeout=5)
    return control_pb2.SaveSnapshotReply.FromString(reply.data).snapshot.id


async def test_list_get_files_read_episode_and_delete(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    nc, js = recorder_js
    root = tmp_path / "recordings"
    done, still_open = f"{unique_prefix}-done", f"{unique_prefix}-open"
    await record_one_episode_with_frames(js, done)
    await publish(js, started(still_open, spec=dict_spec()))
    await wait_drained(js)
    await wait_for(lambda: (m := read_meta(root, done)) and m.status == "closed" and m.episodes,
                   what="the recording closed with its episode listed")
    snapshot_id = await save_snapshot(nc, done, "before the end")

    listing = (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}))["recordings"]
    assert sorted(r["session_id"] for r in listing) == sorted([done, still_open])
    summary = next(r for r in listing if r["session_id"] == done)
    assert "episodes" not in summary and summary["episode_count"] == 1 and summary["status"] == "closed"
    assert [(s["id"], s["label"], s["seq"]) for s in summary["saved_snapshots"]] == [
        (snapshot_id, "before the end", 3)
    ]
    assert next(r for r in listing if r["session_id"] == still_open)["saved_snapshots"] == []
    by_env = await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {"env_id": "DictNav-v0"})
    assert [r["session_id"] for r in by_env["recordings"]] == [still_open]
    by_life = await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {"life": "robot-1"})
    assert by_life == {"recordings": []}, "neither recording belongs to a life"

    meta = (await ask(nc, subjects.RECORDER_GET_RECORDING, {"id": done}))["recording"]
    assert meta["episodes"][0]["length"] == 3 and meta["episodes"][0]["file"] == "episode-000000.npz"

    files = (await ask(nc, subjects.RECORDER_RECORDING_FILES, {"id": done}))["files"]
    on_disk = {p.name: p.stat().st_size for p in (root / done).iterdir()}
    finished = [n for n in sorted(on_disk) if n in ("meta.json", "recording.json") or n.endswith(".npz")]
    assert files == [{"name": n, "size": on_disk[n]} for n in finished]
    assert {"meta.json", "episode-000000.npz"} <= set(finished)
    npz = (root / done / "episode-000000.npz").read_bytes()
    chunks = [await read(nc, {"id": done, "name": "episode-000000.npz", "offset": o, "length": 100})
              for o in range(0, len(npz) + 100, 100)]
    assert all(error is None for _, error in chunks)
    assert b"".join(data for data, _ in chunks) == npz and chunks[-1][0] == b""

    episode = await ask(nc, subjects.RECORDER_EPISODE,
                        {"id": done, "episode": 0, "arrays": ["rewards", "actions"], "frames": [0, 2]})
    assert episode["episode"] == meta["episodes"][0]
    assert {"observations", "actions", "rewards", "terminated", "truncated", "seq", "frames"} <= set(
        episode["array_names"])
    assert episode["array_shapes"]["observations"] == {"dtype": "<f4", "shape": [4, 4]}
    assert episode["frame_count"] == 4
    assert episode["arrays"]["rewards"] == {"dtype": "<f8", "shape": [3], "data": [1.0, 1.0, "nan"]}
    assert episode["arrays"]["actions"]["data"] == [1, 1, 1]
    assert episode["frames"] == {"0": b64(JPEG), "2": b64(JPEG + b"2")}
    with np.load(root / done / "episode-000000.npz") as data:
        assert np.isnan(data["rewards"][2]) and data["frames"][2] == JPEG + b"2"

    for body, code, says in (
        ({"id": done, "episode": 0, "frames": [4]}, "not_found", "frames 0..3 (4 frames); there is no frame"),
        ({"id": done, "episode": 0, "frames": [1]}, "not_found", "has no frame"),
        ({"id": done, "episode": 0, "arrays": ["nope"]}, "not_found", "no array 'nope'"),
        ({"id": done, "episode": 7}, "not_found", "no finished episode 7"),
        ({"id": done, "episode": -1}, "invalid_argument", "'episode'"),
        ({"id": done}, "invalid_argument", "'episode' is required"),
    ):
        reply = await ask(nc, subjects.RECORDER_EPISODE, body)
        assert reply["error"]["code"] == code and says in reply["error"]["message"], (body, reply)

    for body, code, says in (
        ({"id": done, "name": "meta.json", "length": 4 * 1024 * 1024 + 1}, "invalid_argument", "4 MiB"),
        ({"id": done, "name": "episode-000000.npz", "offset": -1}, "invalid_argument", "'offset'"),
        ({"id": done, "name": "../meta.json"}, "invalid_argument", "plain file name"),
        ({"id": done, "name": "orphans.part"}, "not_found", "no finished file 'orphans.part'"),
        ({"id": "nope", "name": "meta.json"}, "not_found", "'nope'"),
    ):
        data, error = await read(nc, body)
        assert data == b"" and error is not None and error["code"] == code and says in error["message"], body

    refused = await ask(nc, subjects.RECORDER_DELETE_RECORDING, {"id": still_open})
    assert refused["error"]["code"] == "failed_precondition"
    assert "still being recorded" in refused["error"]["message"]
    assert (root / still_open / "meta.json").exists()
    deleted = await ask(nc, subjects.RECORDER_DELETE_RECORDING, {"id": done})
    assert deleted == {"deleted": len(on_disk)} and not (root / done).exists()
    for subject in (subjects.RECORDER_GET_RECORDING, subjects.RECORDER_RECORDING_FILES,
                    subjects.RECORDER_DELETE_RECORDING):
        gone = await ask(nc, subject, {"id": done})
        assert gone["error"]["code"] == "not_found", (subject, gone)
    assert (root / "snapshots" / snapshot_id / "snapshot.json").exists(), "saved snapshots stay"


async def test_ids_with_a_path_are_refused_naming_the_rule(
    recorder_js: tuple[Any, Any], recorder_service: Any
) -> None:
    nc, _ = recorder_js
    json_subjects = (subjects.RECORDER_GET_RECORDING, subjects.RECORDER_RECORDING_FILES,
                     subjects.RECORDER_EPISODE, subjects.RECORDER_DELETE_RECORDING)
    for bad in ("..", "a..b", "../etc", "a/b", "a\\b", ".hidden"):
        for subject in json_subjects:
            body = {"id": bad, "episode": 0} if subject == subjects.RECORDER_EPISODE else {"id": bad}
            reply = await ask(nc, subject, body)
            assert reply["error"]["code"] == "invalid_argument", (subject, bad, reply)
            assert "must not contain '/', '\\' or '..', nor start with '.'" in reply["error"]["message"]
        _, error = await read(nc, {"id": bad, "name": "meta.json"})
        assert error is not None and error["code"] == "invalid_argument"
        listed = await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {"session_id": bad})
        assert listed["error"]["code"] == "invalid_argument"
    for body in (b"\xff\xff", b"{not a message", {}):
        reply = await ask(nc, subjects.RECORDER_GET_RECORDING, body)
        assert reply["error"]["code"] == "invalid_argument", (body, reply)
    _, error = await read(nc, {"id": "x"})
    assert error is not None and error["message"] == "'name' is required"
