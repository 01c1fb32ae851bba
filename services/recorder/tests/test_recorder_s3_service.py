"""The recorder with S3 storage (a real S3 API server: moto) on a real nats-server: in-process
(recording and saved snapshots through NATS), as a process SIGKILLed and restarted mid-run
(every step exactly once; a reader trusting manifests never sees a half recording), and its
start-up errors."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from platform_contracts import subjects
from platform_recorder.manifest import read_manifest
from platform_recorder.storage.interface import ObjectNotFoundError
from platform_recorder.storage.s3 import open_s3_storage
from platform_testing.nats_server import NatsServer
from platform_testing.ports import free_port
from platform_testing.s3_server import S3Server
from platform_recorder.meta import RecordingMeta
from recorder_testkit import (
    RecorderProcess,
    closed,
    consumer_drained,
    delivered_total,
    episode_events,
    load_episode,
    publish,
    read_meta,
    started,
    wait_drained,
    wait_for,
)
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2 as env_pb


def _meta(storage: Any, sid: str) -> RecordingMeta | None:
    try:
        return read_meta(storage, sid)
    except Exception:  # noqa: BLE001 - not there yet
        return None


def _seqs(storage: Any, sid: str) -> list[int]:
    out: list[int] = []
    for entry in read_meta(storage, sid).episodes:
        out.append(entry["first_seq"])
        out.extend(load_episode(storage, sid, entry["index"])["seq"].tolist())
    return out


def reader_problems(storage: Any, sid: str) -> list[str]:
    """What a reader trusting the manifest would trip on: an episode named by meta.json but not
    listed by the manifest read after it, a listed object absent or of another size."""
    try:
        meta = json.loads(storage.get(f"{sid}/meta.json"))
    except ObjectNotFoundError:
        return []
    listed = read_manifest(storage, sid)
    if listed is None:
        return []
    problems = [
        f"{e['file']} not listed" for e in meta["episodes"] if e.get("file") and e["file"] not in listed
    ]
    for name, size in listed.items():
        if name.endswith(".npz") and storage.size(f"{sid}/{name}") != size:
            problems.append(f"{name}: listed {size} bytes")
    return problems


async def test_in_process_service_records_and_saves_snapshots_in_s3(
    recorder_js: tuple[Any, Any], s3_storage: Any, tmp_path: Path
) -> None:
    import nats
    from platform_recorder.service import RecorderService

    nc, js = recorder_js
    own = await nats.connect(nc.connected_url.geturl())
    service = RecorderService(own, s3_storage, fetch_timeout=0.2, meta_interval=0, spool=tmp_path / "spool")
    await service.start()
    try:
        events = [*episode_events("s1", 1, 0, 5), *episode_events("s1", 7, 1, 3, last="")]
        for msg in (started("s1"), *events, closed("s1", last_seq=10)):
            await publish(js, msg)
        await wait_drained(js)
        await wait_for(lambda: (m := _meta(s3_storage, "s1")) and m.status == "closed", what="closed")
        assert _seqs(s3_storage, "s1") == list(range(1, 11))
        assert not (tmp_path / "spool" / "s1").exists()
        state = os.urandom(1 << 20)
        snapshot = env_pb.SavedSnapshot(env_id="CartPole-v1", session_id="s1", kwargs_json="{}", seq=4)
        request = control_pb2.SaveSnapshotRequest(snapshot=snapshot, state=state, format="pickle")
        reply = control_pb2.SaveSnapshotReply.FromString(
            (await nc.request(subjects.RECORDER_SAVE_SNAPSHOT, request.SerializeToString(), timeout=20)).data
        )
        assert not reply.HasField("error"), reply.error
        assert s3_storage.get(f"snapshots/{reply.snapshot.id}/state.bin") == state
        got = control_pb2.GetSavedSnapshotReply.FromString(
            (
                await nc.request(
                    subjects.RECORDER_GET_SNAPSHOT,
                    control_pb2.GetSavedSnapshotRequest(
                        id=reply.snapshot.id, with_state=True
                    ).SerializeToString(),
                    timeout=20,
                )
            ).data
        )
        assert not got.HasField("error") and got.state == state and got.snapshot == reply.snapshot
    finally:
        await service.stop()
        await own.drain()


EPISODES, STEPS, KILLS = 12, 100, 5


@pytest.mark.timeout(240)
async def test_sigkill_and_restart_with_s3_write_every_step_once(
    recorder_nats: NatsServer,
    recorder_js: tuple[Any, Any],
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    unique_prefix: str,
) -> None:
    _, js = recorder_js
    env = s3_server.env(s3_bucket)
    log_path = tmp_path / "recorder.log"
    recorder = RecorderProcess(
        recorder_nats.url,
        tmp_path / "unused",
        log_path,
        PLATFORM_RECORDER_BATCH="64",
        PLATFORM_RECORDER_SPOOL=str(tmp_path / "spool"),
        **env,
    ).start()
    await wait_for(recorder.ready, timeout=30, what="the recorder to start")
    storage = open_s3_storage(
        env["PLATFORM_RECORDINGS"],
        s3_server.endpoint,
        s3_server.access_key,
        s3_server.secret_key,
        s3_server.region,
        secure=False,
    )
    sid = f"{unique_prefix}-s3crash"
    events: list[Any] = []
    for episode in range(EPISODES):
        events += episode_events(sid, len(events) + 1, episode, STEPS, agent={"value": float(episode)})
    total, rng, kills, problems = len(events), random.Random(11), 0, []

    async def publisher() -> None:
        await publish(js, started(sid))
        for i in range(0, total, 30):
            while i >= total * 0.8 and kills < KILLS:
                await asyncio.sleep(0.05)
            for event in events[i : i + 30]:
                await publish(js, event)
            await asyncio.sleep(0.05)
        await publish(js, closed(sid, last_seq=total))

    async def reader() -> None:  # a reader that trusts manifests, all along
        while True:
            problems.extend(await asyncio.to_thread(reader_problems, storage, sid))
            await asyncio.sleep(0.03)

    publishing, reading = asyncio.create_task(publisher()), asyncio.create_task(reader())
    try:
        while kills < KILLS or not publishing.done():
            before = await delivered_total(js)
            deadline = time.monotonic() + 30
            while await delivered_total(js) == before and not await consumer_drained(js):
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                assert recorder.process is not None and recorder.process.poll() is None, log_path.read_text()[
                    -3000:
                ]
                await asyncio.sleep(0.02)
            await asyncio.sleep(rng.uniform(0.0, 0.4))
            recorder.kill()
            kills += 1
            recorder.start()
        await publishing
        await wait_for(recorder.ready, timeout=30, what="the last restart")
        await wait_for(
            lambda: (m := _meta(storage, sid)) and m.status == "closed", timeout=60, what="closed"
        )
        await wait_drained(js, timeout=30)
    finally:
        publishing.cancel()
        reading.cancel()
        returncode = recorder.stop()
    log = log_path.read_text()
    assert returncode == 0, log[-3000:]
    assert "unacked messages: resuming" in log  # at least one kill hit a batch in flight
    assert "GAP" not in log and "Traceback" not in log, log[-3000:]
    meta = read_meta(storage, sid)
    assert meta.last_seq == total and meta.missing_seqs == [] and meta.orphan_seqs == []
    assert [e["length"] for e in meta.episodes] == [STEPS] * EPISODES
    for entry in meta.episodes:
        data = load_episode(storage, sid, entry["index"])
        assert data["observations"][:, 0].tolist() == list(range(entry["first_seq"], entry["last_seq"] + 1))
    assert _seqs(storage, sid) == list(range(1, total + 1))  # every seq exactly once, in order
    assert problems == []
    assert sorted(read_manifest(storage, sid)) == sorted(
        n[len(sid) + 1 :] for n in storage.list(f"{sid}/") if not n.endswith("manifest.json")
    )
    assert not (tmp_path / "spool" / sid).exists() and not (tmp_path / "unused").exists()


def _run_recorder(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
    return subprocess.run(
        [sys.executable, "-m", "platform_recorder"],
        check=False,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "missing",
    [
        ["PLATFORM_S3_ENDPOINT"],
        ["PLATFORM_S3_ACCESS_KEY"],
        ["PLATFORM_S3_SECRET_KEY"],
        ["PLATFORM_S3_ACCESS_KEY", "PLATFORM_S3_SECRET_KEY"],
    ],
)
def test_a_missing_s3_setting_stops_the_start_with_one_line(
    missing: list[str], s3_server: S3Server, tmp_path: Path
) -> None:
    """Checked before anything starts (no NATS is reached for: PLATFORM_NATS_URL is unset)."""
    env = {**s3_server.env("bucket-a"), "PLATFORM_RECORDER_SPOOL": str(tmp_path / "spool")}
    for name in missing:
        del env[name]
    done = _run_recorder(env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert all(name in lines[0] for name in missing) and "s3://bucket-a" in lines[0], lines[0]
    assert "Traceback" not in done.stderr and not (tmp_path / "spool").exists()


def test_an_unreachable_s3_endpoint_stops_the_start_with_one_line(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    done = _run_recorder(
        {
            "PLATFORM_RECORDINGS": "s3://bucket-a/rec",
            "PLATFORM_S3_ENDPOINT": endpoint,
            "PLATFORM_S3_ACCESS_KEY": "k",
            "PLATFORM_S3_SECRET_KEY": "s",
            "PLATFORM_S3_SECURE": "0",
            "PLATFORM_RECORDER_SPOOL": str(tmp_path / "spool"),
        }
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "cannot use the bucket of s3://bucket-a/rec/" in lines[0] and endpoint in lines[0]
