"""Recordings in S3 (a real S3 API server: moto), written by the writer without NATS: the objects,
the manifest written last, part files in the spool, restarts from the spool, sub-sessions and
saved snapshots. A reader trusting the manifest is checked after every write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from platform_contracts import subjects
from platform_recorder.errors import RecordingNotFoundError, SavedSnapshotNotFoundError
from platform_recorder.manifest import read_manifest
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingStore
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    batch_of,
    cartpole_spec,
    closed,
    episode_events,
    list_recordings,
    load_episode,
    read_meta,
    read_recording_info,
    started,
    subject_of,
)
from simulusion.env.v1 import environment_pb2 as env_pb


class ReaderCheckedStorage:
    """The real S3 storage, with what a reader that trusts manifests sees checked after each write
    (every listed object there whole, every episode a trusted meta.json names listed)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes: list[str] = []
        self.violations: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def put_atomic(self, key: str, data: Any, *, sync_folder: bool = True) -> None:
        self.inner.put_atomic(key, data, sync_folder=sync_folder)
        self.writes.append(key)
        self.check(key.split("/", 1)[0])

    def put_new_folder(self, prefix: str, files: Any) -> None:
        type(self.inner).put_new_folder(self, prefix, files)  # its PUTs go through put_atomic above

    def check(self, recording_id: str) -> None:
        listed = read_manifest(self.inner, recording_id)
        if listed is None:
            return
        for name, size in listed.items():
            if not self.inner.exists(f"{recording_id}/{name}"):
                self.violations.append(f"{recording_id}/{name} listed but absent")
            elif name.endswith(".npz") and self.inner.size(f"{recording_id}/{name}") != size:
                self.violations.append(f"{recording_id}/{name} listed with another size")
        if "meta.json" in listed:
            meta = json.loads(self.inner.get(f"{recording_id}/meta.json"))
            for entry in meta["episodes"]:
                if entry.get("file") and entry["file"] not in listed:
                    self.violations.append(f"meta.json names {entry['file']}, the manifest does not")


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def all_seqs(storage: Any, sid: str) -> list[int]:
    out: list[int] = []
    for entry in read_meta(storage, sid).episodes:
        out.append(entry["first_seq"])
        out.extend(load_episode(storage, sid, entry["index"])["seq"].tolist())
    return out


def labelled_spec() -> env_pb.SpecResponse:
    spec = cartpole_spec()
    spec.observation_labels.add(name="cart", start=0, stop=2)
    spec.observation_labels.add(name="pole", start=2, stop=4)
    return spec


def finished_names(storage: Any, recording_id: str) -> set[str]:
    """The names of the finished files the recordings API lists for the recording."""
    return {entry.name for entry in RecordingStore(storage).files(recording_id)}


def test_a_session_lands_in_the_bucket_with_its_manifest_last(s3_storage: Any, tmp_path: Path) -> None:
    storage = ReaderCheckedStorage(s3_storage)
    spool = tmp_path / "spool"
    writer = RecordingWriter(storage, meta_interval=0, spool=spool)
    ep0, ep1 = episode_events("s1", 1, 0, 3), episode_events("s1", 5, 1, 2, last="truncated")
    ep2 = episode_events("s1", 8, 2, 4, last="")
    writer.process(msgs(started("s1", spec=labelled_spec(), kwargs={"g": 9.0}), *ep0, *ep1, *ep2[:3]))
    assert sorted(p.name for p in (spool / "s1").iterdir()) == ["episode-000002.part"]  # the open one
    assert finished_names(s3_storage, "s1") == {
        "episode-000000.npz",
        "episode-000001.npz",
        "meta.json",
        "recording.json",
    }
    writer.process(msgs(*ep2[3:], closed("s1", last_seq=12)))

    names = sorted(s3_storage.list("s1/"))
    assert names == [
        f"s1/{n}"
        for n in (
            "episode-000000.npz",
            "episode-000001.npz",
            "episode-000002.npz",
            "manifest.json",
            "meta.json",
            "recording.json",
        )
    ]
    objects = s3_storage.client.list_objects(s3_storage.bucket, prefix="recordings/s1/", recursive=True)
    assert sorted(o.object_name for o in objects) == [f"recordings/{n}" for n in names]  # under the prefix
    listed = read_manifest(s3_storage, "s1")
    assert listed == {n[3:]: s3_storage.size(n) for n in names if not n.endswith("manifest.json")}
    assert storage.writes[-1] == "s1/manifest.json" and storage.violations == []
    assert not (spool / "s1").exists()  # closed: its spool folder is gone

    meta = read_meta(s3_storage, "s1")
    assert meta.status == "closed" and meta.last_seq == 12
    assert [e["length"] for e in meta.episodes] == [3, 2, 4]
    assert all_seqs(s3_storage, "s1") == list(range(1, 13))
    info = read_recording_info(s3_storage, "s1")
    assert (info["format"], info["status"], info["env_id"], info["kwargs"]) == (
        1,
        "closed",
        "CartPole-v1",
        {"g": 9.0},
    )
    assert info["closed_at"] and info["world_changes"] == [] and info["spec"]["num_envs"] == 1
    assert info["spec"]["observation_labels"] == [
        {"name": "cart", "start": 0, "stop": 2},
        {"name": "pole", "start": 2, "stop": 4},
    ]
    assert [m["session_id"] for m in list_recordings(s3_storage)] == ["s1"]
    assert list_recordings(s3_storage, env_id="Pong") == []
    store = RecordingStore(s3_storage)
    npz = store.read("s1", "episode-000001.npz", 0, MAX_READ_BYTES)
    assert len(npz) == s3_storage.size("s1/episode-000001.npz")
    assert store.read("s1", "episode-000001.npz", offset=10, length=20) == npz[10:30]
    with pytest.raises(RecordingNotFoundError, match="no finished file 'manifest.json'"):
        store.read("s1", "manifest.json", 0, 100)
    with pytest.raises(RecordingNotFoundError, match="'nope' not found"):
        store.read_meta("nope")


def test_episodes_stay_unlisted_until_their_meta_and_a_restart_lists_them(
    s3_storage: Any, tmp_path: Path
) -> None:
    storage = ReaderCheckedStorage(s3_storage)
    spool = tmp_path / "spool"
    writer = RecordingWriter(storage, meta_interval=60, spool=spool)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 3), *episode_events("s1", 5, 1, 2)))
    # both npz are in the bucket, but the (lagging) meta.json does not name them: readers see neither
    assert s3_storage.exists("s1/episode-000001.npz")
    assert finished_names(s3_storage, "s1") == {"meta.json", "recording.json"}
    assert read_meta(s3_storage, "s1").episodes == []
    with pytest.raises(RecordingNotFoundError, match="no finished episode 0"):
        load_episode(s3_storage, "s1", 0)
    assert sorted(p.name for p in (spool / "s1").iterdir()) == ["episode-000000.part", "episode-000001.part"]
    del writer  # killed: the parts in the spool are what made the events durable
    again = RecordingWriter(storage, meta_interval=60, spool=spool)
    assert again.recover() == 1
    assert [e["length"] for e in read_meta(s3_storage, "s1").episodes] == [3, 2]
    assert finished_names(s3_storage, "s1") >= {"episode-000000.npz", "episode-000001.npz"}
    assert not list((spool / "s1").glob("*.part"))
    # redelivered events are duplicates; the rest is written once
    counts = again.process(msgs(*episode_events("s1", 5, 1, 2), *episode_events("s1", 8, 2, 2)))
    assert counts["duplicate"] == 3 and counts["written"] == 3
    again.process(msgs(closed("s1", last_seq=10)))
    assert all_seqs(s3_storage, "s1") == list(range(1, 11)) and storage.violations == []


def test_a_part_written_before_a_kill_is_finished_once(s3_storage: Any, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    events = episode_events("s1", 1, 0, 6)
    RecordingWriter(s3_storage, spool=spool).process(msgs(started("s1"), *events[:4]))  # acked, then killed
    writer = RecordingWriter(s3_storage, spool=spool)
    assert writer.recover() == 1
    counts = writer.process(msgs(*events[2:]))  # the unacked rest, redelivered with some overlap
    assert counts["duplicate"] == 2 and counts["written"] == 3
    assert all_seqs(s3_storage, "s1") == list(range(1, 8))


def test_sub_sessions_of_a_vector_session(s3_storage: Any, tmp_path: Path) -> None:
    writer = RecordingWriter(s3_storage, meta_interval=0, spool=tmp_path / "spool")
    sid = "s-0123456789ab"
    spec = cartpole_spec()
    spec.num_envs = 2
    subs = [subjects.sub_session_id(sid, i) for i in range(2)]
    rows = {s: episode_events(s, 1, 0, 3, last="") for s in subs}
    writer.process(msgs(started(sid, spec=spec)))
    for row in range(4):
        data = batch_of(*(rows[s][row] for s in subs)).SerializeToString()
        writer.process([(subjects.session_step_batches(sid), data)])
    writer.process(msgs(closed(sid)))
    for index, sub in enumerate(subs):
        meta = read_meta(s3_storage, sub)
        assert meta.status == "closed" and all_seqs(s3_storage, sub) == [1, 2, 3, 4]
        info = read_recording_info(s3_storage, sub)
        assert (info["parent_session_id"], info["env_index"], info["status"]) == (sid, index, "closed")
        assert info["spec"]["num_envs"] == 1
    assert read_recording_info(s3_storage, sid)["spec"]["num_envs"] == 2
    assert [m["session_id"] for m in list_recordings(s3_storage)] == sorted([sid, *subs], reverse=True)


def test_saved_snapshots_in_s3(s3_storage: Any) -> None:
    storage = ReaderCheckedStorage(s3_storage)
    store = SavedSnapshotStore(storage)
    snapshot = env_pb.SavedSnapshot(
        env_id="CartPole-v1", session_id="s-1", kwargs_json="{}", label="x", seq=3
    )
    saved = store.save(snapshot, b"state" * 1000, "pickle")
    assert storage.writes == [f"snapshots/{saved.id}/state.bin", f"snapshots/{saved.id}/snapshot.json"]
    got, state, fmt = store.get(saved.id, with_state=True)
    assert got == saved and state == b"state" * 1000 and fmt == "pickle"
    assert [s.id for s in store.list_snapshots(session_id="s-1")] == [saved.id]
    # what a save killed between its two writes leaves: a state without snapshot.json, never seen
    s3_storage.put_atomic("snapshots/snap-0123456789ab/state.bin", b"half")
    assert [s.id for s in store.list_snapshots()] == [saved.id]
    with pytest.raises(SavedSnapshotNotFoundError):
        store.get("snap-0123456789ab", with_state=True)
    assert store.remove_stale_temps() == 0
    assert list_recordings(s3_storage) == []  # the snapshots folder is not a recording


class FlakyStorage(ReaderCheckedStorage):
    """The real S3 storage, unreachable (every call fails) while `down`."""

    down = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if callable(attr) and self.down:
            raise ConnectionError(f"S3 is down ({name})")
        return attr

    def put_atomic(self, key: str, data: Any, *, sync_folder: bool = True) -> None:
        if self.down:
            raise ConnectionError("S3 is down (put_atomic)")
        super().put_atomic(key, data, sync_folder=sync_folder)


def test_an_s3_outage_fails_the_batch_and_its_redelivery_writes_it_once(
    s3_storage: Any, tmp_path: Path
) -> None:
    storage = FlakyStorage(s3_storage)
    writer = RecordingWriter(storage, meta_interval=0, spool=tmp_path / "spool")
    events = [*episode_events("s1", 1, 0, 3), *episode_events("s1", 5, 1, 3)]
    writer.process(msgs(started("s1"), *events[:2]))
    storage.down = True
    with pytest.raises(ConnectionError):  # the episode's npz cannot be written: nothing is acked
        writer.process(msgs(*events[2:6]))
    writer.reset()  # what the consumer loop does before the batch comes again
    with pytest.raises(ConnectionError):  # still down: the state cannot even be reloaded
        writer.process(msgs(*events[2:6]))
    writer.reset()
    storage.down = False
    counts = writer.process(msgs(*events[2:]))  # delivered again, with what followed
    assert counts["duplicate"] == 4 and counts["written"] == 2
    writer.process(msgs(closed("s1", last_seq=8)))
    assert all_seqs(s3_storage, "s1") == list(range(1, 9)) and storage.violations == []
