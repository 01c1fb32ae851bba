"""The recordings REST API on the whole platform: a recorded CartPole session with frames, read
back through the gateway and the recorder (list, meta, episodes, arrays, frames, files, archive),
then deleted."""

from __future__ import annotations

import io
import json
import tarfile

import httpx
import numpy as np
import platform_sdk
import simplejpeg
from platform_testing.platform import running_platform
from platform_testing.waiting import wait_for


def balance(obs: np.ndarray) -> int:
    """Push toward where the pole falls: keeps CartPole up for hundreds of steps."""
    return int(obs[2] + 0.5 * obs[3] > 0)


def test_recordings_api_end_to_end(platform_stack):
    url = platform_stack.url
    http = httpx.Client(base_url=url, timeout=60)
    rewards, actions = [], []
    with platform_sdk.connect("cartpole", url=url, record=True, record_frames=True, jpeg_quality=95) as env:
        sid = env.session_id
        obs, _ = env.reset(seed=3)
        done = False
        while not done:
            actions.append(balance(obs))
            obs, reward, terminated, truncated, _ = env.step(actions[-1])
            rewards.append(reward)
            done = terminated or truncated
        saved = env.save_snapshot("after the first episode")
        env.reset(seed=4)
        for _ in range(3):
            env.step(0)
        wait_for(lambda: http.get(f"/v0/recordings/{sid}").status_code == 200, what="the recording to exist")
        refused = http.delete(f"/v0/recordings/{sid}")
        assert refused.status_code == 409 and "still being recorded" in refused.json()["detail"]

    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed"
                    and len(m.get("episodes", [])) == 2 and m, what="the recording closed with 2 episodes")
    assert meta["env_id"] == "cartpole" and meta["episodes"][0]["length"] == len(rewards)
    assert [(e["seed"], e["reset_options"]) for e in meta["episodes"]] == [(3, None), (4, None)]
    assert meta["world_changes"] == []

    listed = http.get("/v0/recordings", params={"session_id": sid}).json()
    assert [r["id"] for r in listed["data"]] == [sid]
    summary = listed["data"][0]
    assert summary["episode_count"] == 2 and "episodes" not in summary
    assert summary["step_count"] == len(rewards) + 3 and summary["total_return"] == sum(rewards) + 3.0
    snapshots = [(s["id"], s["label"]) for s in summary["saved_snapshots"]]
    assert snapshots == [(saved["id"], "after the first episode")]
    assert sid in [r["id"] for r in http.get("/v0/recordings", params={"env_id": "cartpole"}).json()["data"]]

    base = f"/v0/recordings/{sid}/episodes/0"
    episode = http.get(base, params={"arrays": "rewards"}).json()
    assert episode["frame_count"] == len(rewards) + 1, "the reset's frame and one per step"
    assert episode["arrays"]["rewards"]["data"] == rewards
    assert episode["array_shapes"]["observations"]["shape"] == [len(rewards) + 1, 4]
    as_json = http.get(f"{base}/arrays/actions").json()
    assert as_json["data"] == actions and as_json["shape"] == [len(actions)]
    npy = http.get(f"{base}/arrays/observations", params={"format": "npy"})
    observations = np.load(io.BytesIO(npy.content), allow_pickle=False)
    assert observations.shape == (len(rewards) + 1, 4) and observations.dtype == np.float32
    np.testing.assert_array_equal(observations[-1], obs)  # the first episode's last observation

    frame = http.get(f"{base}/frames/{len(rewards)}")
    assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
    assert simplejpeg.decode_jpeg(frame.content).shape == (400, 600, 3)
    beyond = http.get(f"{base}/frames/{len(rewards) + 1}")
    assert beyond.status_code == 404
    assert f"frames 0..{len(rewards)} ({len(rewards) + 1} frames)" in beyond.json()["detail"]

    npz_bytes = http.get(f"{base}/file").content
    with np.load(io.BytesIO(npz_bytes), allow_pickle=False) as data:
        np.testing.assert_array_equal(data["observations"], observations)
        assert data["rewards"].tolist() == rewards

    archive = http.get(f"/v0/recordings/{sid}/archive")
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(archive.content)) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    names = ("meta.json", "recording.json", "episode-000000.npz", "episode-000001.npz")
    assert sorted(files) == sorted(f"{sid}/{name}" for name in names)
    assert files[f"{sid}/episode-000000.npz"] == npz_bytes
    assert json.loads(files[f"{sid}/meta.json"])["episodes"] == meta["episodes"]
    with np.load(io.BytesIO(files[f"{sid}/episode-000001.npz"]), allow_pickle=False) as second:
        assert second["actions"].tolist() == [0, 0, 0]

    assert http.get("/v0/recordings/s-no-such-recording").status_code == 404
    bad = http.get("/v0/recordings/..x")
    assert bad.status_code == 422 and "must not contain '/', '\\' or '..'" in bad.json()["detail"]

    assert http.delete(f"/v0/recordings/{sid}").status_code == 204
    assert http.get(f"/v0/recordings/{sid}").status_code == 404
    assert http.delete(f"/v0/recordings/{sid}").status_code == 404
    assert http.get(f"/v0/snapshots/{saved['id']}").status_code == 200, "its saved snapshot stays"
    http.close()


# A session may not pass render_size (the built-in entries do not declare it: issue 29); an entry
# of the operator's catalog.toml may set it.
BIG_FRAMES_CATALOG = """
[envs.dmc-cartpole-swingup-big]
factory = "platform_envs.adapters.dmc:make_env"
kwargs = { domain = "cartpole", task = "swingup", render_size = [480, 640] }
"""


def test_an_archive_larger_than_a_nats_message(tmp_path):
    """A dm_control episode with a detailed frame per step: its .npz takes several 4 MiB reads."""
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(BIG_FRAMES_CATALOG)
    with running_platform(tmp_path / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        archive_larger_than_a_nats_message(stack.url)


def archive_larger_than_a_nats_message(url: str) -> None:
    http = httpx.Client(base_url=url, timeout=120)
    with platform_sdk.connect("dmc-cartpole-swingup-big", url=url, record=True,
                              record_frames=True, jpeg_quality=95) as env:
        sid = env.session_id
        env.reset(seed=0)
        steps = sum(env.hold(np.array([0.5]), 200).steps for _ in range(3))  # with frames: <= 256 a hold
    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed"
                    and m.get("episodes") and m, what="the recording closed")
    assert meta["episodes"][0]["length"] == steps
    archive = http.get(f"/v0/recordings/{sid}/archive")
    assert archive.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(archive.content)) as tar:
        sizes = {member.name: member.size for member in tar.getmembers()}
        episode = tar.extractfile(f"{sid}/episode-000000.npz").read()  # type: ignore[union-attr]
    assert sizes[f"{sid}/episode-000000.npz"] > 4 * 1024 * 1024, sizes
    assert episode == http.get(f"/v0/recordings/{sid}/episodes/0/file").content
    with np.load(io.BytesIO(episode), allow_pickle=False) as data:
        assert len(data["frames"]) == steps + 1 and len(data["actions"]) == steps
        assert simplejpeg.decode_jpeg(bytes(data["frames"][-1])).ndim == 3
    http.close()
