"""The whole platform recording into S3 (a real S3 API server: moto): a recorded cartpole session's
files land in the bucket, listed by the manifest, and the gateway lists and serves them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
from platform_recorder.manifest import read_manifest
from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingStore
from platform_recorder.storage.s3 import open_s3_storage
from platform_testing.platform import running_platform
from platform_testing.s3_server import S3Server
from platform_testing.waiting import wait_for


def test_a_recorded_session_lands_in_s3(tmp_path: Path, s3_server: S3Server, s3_bucket: str) -> None:
    env = s3_server.env(s3_bucket, prefix="platform/recordings")
    with running_platform(tmp_path / "platform", extra_env=env) as stack:
        rng = np.random.default_rng(3)
        actions: list[list[int]] = []
        with platform_sdk.connect("cartpole", url=stack.url, record=True) as sdk_env:
            sid = sdk_env.session_id
            for episode in range(2):
                sdk_env.reset(seed=episode)
                actions.append([])
                while True:
                    action = int(rng.integers(0, 2))
                    _, _, terminated, truncated, _ = sdk_env.step(action)
                    actions[-1].append(action)
                    if terminated or truncated:
                        break
            sdk_env.reset(seed=7)
            for _ in range(4):  # an unfinished third episode, kept at the close
                sdk_env.step(1)

        storage = open_s3_storage(
            env["PLATFORM_RECORDINGS"],
            s3_server.endpoint,
            s3_server.access_key,
            s3_server.secret_key,
            s3_server.region,
            secure=False,
        )

        store = RecordingStore(storage)  # as the recordings API reads them

        def closed() -> RecordingMeta | None:
            try:
                meta = store.read_meta(sid)
            except Exception:  # noqa: BLE001 - not there yet
                return None
            if meta.status != "closed" or len(meta.episodes) != 3:
                return None
            # the manifest is written last after each change: wait for the one listing this meta
            listed = read_manifest(storage, sid) or {}
            return meta if listed.get("meta.json") == storage.size(f"{sid}/meta.json") else None

        meta = wait_for(closed, timeout=60, what=f"recording {sid} closed in S3")
        assert meta.env_id == "cartpole" and meta.last_seq == sum(map(len, actions)) + 4 + 3
        keys = storage.list(f"{sid}/")
        names = sorted(k[len(sid) + 1 :] for k in keys)
        assert names == [
            "episode-000000.npz",
            "episode-000001.npz",
            "episode-000002.npz",
            "manifest.json",
            "meta.json",
            "recording.json",
        ]
        objects = storage.client.list_objects(s3_bucket, prefix=f"platform/recordings/{sid}/", recursive=True)
        assert len(list(objects)) == 6  # under the configured prefix of the bucket
        listed = read_manifest(storage, sid)
        assert listed == {n: storage.size(f"{sid}/{n}") for n in names if n != "manifest.json"}
        for episode in range(2):
            with store.open_episode(sid, episode) as (_, episode_file):
                assert episode_file.array("actions").tolist() == actions[episode]
        with store.open_episode(sid, 2) as (entry, episode_file):
            assert entry["length"] == 4 and len(episode_file.array("actions")) == 4
        info = json.loads(store.read(sid, "recording.json", 0, MAX_READ_BYTES))
        assert info["status"] == "closed" and info["env_id"] == "cartpole" and info["world_changes"] == []
        npz = np.load(io.BytesIO(storage.get(f"{sid}/episode-000000.npz")))  # plain numpy reads it
        assert npz["actions"].tolist() == actions[0]
        assert not (tmp_path / "platform" / "recordings" / sid).exists()  # nothing in the folder
        spool = tmp_path / "platform" / "data" / "recorder-spool"
        # the part files were in the spool, now finished: they go right after meta.json lists them
        wait_for(lambda: not list(spool.rglob("*.part")), what="the spooled part files removed")

        listing = httpx.get(f"{stack.url}/v0/recordings", params={"session_id": sid}, timeout=30)
        assert listing.status_code == 200, listing.text
        assert [r["session_id"] for r in listing.json()["data"]] == [sid]
        one = httpx.get(f"{stack.url}/v0/recordings/{sid}", timeout=30)
        assert one.status_code == 200 and one.json()["env_id"] == "cartpole"
        assert json.loads(storage.get(f"{sid}/meta.json"))["session_id"] == sid
        assert "recorder writing to s3://" in stack.log("recorder")
