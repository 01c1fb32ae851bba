"""What the cluster tests do as clients, from the root namespace: hear the env hosts' heartbeats,
read a session's state, step on REST, wait for a recording in S3, see which recorder holds
which session partition."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

import httpx
import nats
from nats.js.errors import KeyNotFoundError
from platform_contracts import subjects
from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.storage.s3 import open_s3_storage
from platform_testing.waiting import wait_for
from simulusion.control.v1 import control_pb2

from cluster.platform import ClusterPlatform


def heartbeats(cluster: ClusterPlatform, host_ids: Iterable[str], timeout: float = 30.0) -> dict[str, Any]:
    """The next heartbeat of each of `host_ids` (a HostHeartbeat each), heard on the cluster's NATS."""

    async def hear() -> dict[str, Any]:
        wanted, heard = set(host_ids), {}
        nc = await nats.connect(cluster.nats_urls, connect_timeout=5)
        try:
            done = asyncio.get_running_loop().create_future()

            async def on_beat(msg: Any) -> None:
                beat = control_pb2.HostHeartbeat.FromString(msg.data)
                if beat.host_id in wanted:
                    heard[beat.host_id] = beat
                    if set(heard) == wanted and not done.done():
                        done.set_result(None)

            await nc.subscribe(subjects.ENVHOST_HEARTBEAT, cb=on_beat)
            await asyncio.wait_for(done, timeout)
        finally:
            await nc.close()
        return heard

    return asyncio.run(hear())


def session(cluster: ClusterPlatform, session_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{cluster.url}/v0/sessions/{session_id}", timeout=30)
    answer.raise_for_status()
    return dict(answer.json())


def assert_running_and_stepping(cluster: ClusterPlatform, envs: Any, seed: int) -> None:
    """Each session is RUNNING at the gateway and still steps: a reset, then a step's CartPole reward."""
    for env in envs:
        assert session(cluster, env.session_id)["state"] == "running"
        env.reset(seed=seed)
        assert env.step(0)[1] == 1.0


def rest_step(cluster: ClusterPlatform, session_id: str, action: int = 0) -> httpx.Response:
    return httpx.post(f"{cluster.url}/v0/sessions/{session_id}/step", json={"action": action}, timeout=30)


def closed_recording(cluster: ClusterPlatform, session_id: str, timeout: float = 90.0) -> tuple[RecordingStore, RecordingMeta]:
    """The recording of `session_id` once its meta reads closed, from the cluster's S3."""
    assert cluster.s3 is not None
    env = cluster.s3.env(cluster.bucket)
    storage = open_s3_storage(env["PLATFORM_RECORDINGS"], cluster.s3.endpoint, cluster.s3.access_key,
                              cluster.s3.secret_key, cluster.s3.region, secure=False)
    store = RecordingStore(storage)

    def closed() -> RecordingMeta | None:
        try:
            meta = store.read_meta(session_id)
        except Exception:  # noqa: BLE001 - not there yet
            return None
        return meta if meta.status == "closed" else None

    return store, wait_for(closed, timeout=timeout, what=f"recording {session_id} closed in S3")


def wait_state(cluster: ClusterPlatform, session_id: str, states: set[str], timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        current = session(cluster, session_id)
        if current["state"] in states or time.monotonic() > deadline:
            return current
        time.sleep(0.5)


def recorded_actions(store: RecordingStore, meta: RecordingMeta) -> list[list[int]]:
    """Each recorded episode's actions, in order."""
    episodes = []
    for entry in meta.episodes:
        with store.open_episode(meta.id, int(entry["index"])) as (_, arrays):
            episodes.append([int(a) for a in arrays.array("actions").reshape(-1)])
    return episodes


def wait_idle(cluster: ClusterPlatform, timeout: float = 30.0) -> None:
    """Until every env host's heartbeat says it runs nothing (the broker hears the same beats)."""
    ids = [cluster.envhost_id(name) for name in cluster.envhosts]
    deadline = time.monotonic() + timeout
    while any(beat.running or beat.instances for beat in heartbeats(cluster, ids).values()):
        assert time.monotonic() < deadline, "the env hosts still run instances of closed sessions"
    time.sleep(0.5)


def stream_servers(cluster: ClusterPlatform) -> tuple[int, dict[str, bool]]:
    """The sessions stream's replicas setting, and the servers holding it: server -> in step
    with its leader (the leader: True)."""

    async def ask() -> tuple[int, dict[str, bool]]:
        nc = await nats.connect(cluster.nats_urls, connect_timeout=5)
        try:
            info = await nc.jetstream().stream_info(subjects.SESSIONS_STREAM)
        finally:
            await nc.close()
        assert info.cluster is not None, "the stream has no cluster info: not on a cluster"
        servers = {info.cluster.leader or "": True}
        servers.update({peer.name: bool(peer.current) for peer in info.cluster.replicas or []})
        return info.config.num_replicas or 1, servers

    return asyncio.run(ask())


def partition_holders(cluster: ClusterPlatform) -> dict[int, str]:
    """Which recorder holds each session partition now (the leases bucket's `partition.<p>`
    keys: platform_recorder.partitions); a partition nobody holds is left out."""

    async def ask() -> dict[int, str]:
        nc = await nats.connect(cluster.nats_urls, connect_timeout=5)
        try:
            kv = await nc.jetstream().key_value(subjects.RECORDER_LEASES_BUCKET)
            holders = {}
            for partition in range(subjects.SESSION_PARTITIONS):
                try:
                    entry = await kv.get(f"partition.{partition}")
                except KeyNotFoundError:
                    continue
                if entry.value:
                    holders[partition] = entry.value.decode()
            return holders
        finally:
            await nc.close()

    return asyncio.run(ask())
