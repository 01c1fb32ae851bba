"""Every NATS message of the platform carries the OpenTelemetry context (docs/architecture.md).

One platform (with a warm pool, so claims happen) is watched on `platform.>` while a traced
client goes through everything that sends messages: the broker's restart (reconcile's list and
stop, the pool's start), a recorded session claimed from the pool (reset, steps, a hold, an
in-memory snapshot, a saved snapshot and its restore, close) and the REST reads of envs,
sessions (a session's trace among them), recordings, saved snapshots, usage and /metrics, a comparison stored and read, then the recording's
delete, the machines' and experiments' requests, and the evals' (a refused one, the list, one nowhere). Each subject of `platform_contracts.subjects` is then a test of its own: something was
sent on it, and every message sent on it has a `traceparent` header.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import nats
from platform_bus import flush_queued
import platform_sdk
import pytest
from opentelemetry import trace
from platform_contracts import subjects
from platform_contracts.tracing import inject_dict, setup_tracing
from platform_testing.platform import running_platform
from platform_testing.sshd import SshServer
from platform_testing.waiting import wait_for
from simulusion.control.v1 import control_pb2
from simulusion.machines.v1 import machines_pb2


def platform_subjects() -> dict[str, re.Pattern[str]]:
    """Every subject of `platform_contracts.subjects` by name: its constants as they are, its
    functions of one id with any token for the id (and a session's, any partition)."""
    found: dict[str, re.Pattern[str]] = {}
    for name, value in vars(subjects).items():
        if isinstance(value, str) and value.startswith("platform.") and not set(value) & {"*", ">"}:
            found[name] = re.compile(re.escape(value))
        elif inspect.isfunction(value) and value.__module__ == subjects.__name__:
            required = [p for p in inspect.signature(value).parameters.values() if p.default is inspect.Parameter.empty]
            subject = value("ID") if len(required) == 1 else None
            if isinstance(subject, str) and subject.startswith("platform.") and not set(subject) & {"*", ">"}:
                pattern = re.escape(subject).replace("ID", r"[^.]+")
                if subjects.session_of_subject(subject) == "ID":  # its partition's token: any
                    pattern = pattern.rsplit(r"\.", 1)[0] + r"\.[0-9]+"
                found[name] = re.compile(pattern)
    return found


SUBJECTS = platform_subjects()


@dataclass
class Seen:
    subject: str
    headers: dict[str, str]
    data: bytes
    at: float


class BusWatch:
    """Every message on `platform.>`, collected by a NATS client on a thread of its own."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._watch(),), daemon=True)

    def __enter__(self) -> BusWatch:
        self._thread.start()
        assert self._ready.wait(20), "the watching NATS client did not subscribe"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)

    def messages(self, pattern: re.Pattern[str] | None = None) -> list[Seen]:
        with self._lock:
            return [m for m in self.seen if pattern is None or pattern.fullmatch(m.subject)]

    async def _watch(self) -> None:
        self._stop = asyncio.Event()
        nc = await nats.connect(self.url)

        async def keep(msg) -> None:
            with self._lock:
                self.seen.append(Seen(msg.subject, dict(msg.headers or {}), msg.data, time.monotonic()))

        await nc.subscribe("platform.>", cb=keep)
        await flush_queued(nc)
        self._ready.set()
        await self._stop.wait()
        await nc.close()


def alive_instances(watch: BusWatch, since: float = 0.0) -> set[str]:
    """The ids of the live instances the heartbeats after `since` list."""
    alive: set[str] = set()
    for beat in watch.messages(SUBJECTS["ENVHOST_HEARTBEAT"]):
        if beat.at > since:
            alive |= {i.session_id for i in control_pb2.HostHeartbeat.FromString(beat.data).instances if i.alive}
    return alive


def new_pool_instance_alive(watch: BusWatch, since: float, old: set[str]) -> bool:
    """A heartbeat after `since` shows a live instance that is not one of `old`: the new
    broker's warm one (the old one is alive until its reconcile stops it, and a session
    created meanwhile would find no warm instance to claim)."""
    return bool(alive_instances(watch, since) - old)


def traced_session_and_reads(url: str, nats_url: str, sshd: SshServer) -> None:
    """A recorded session and the REST reads, all inside one span of the client."""
    tracer = setup_tracing("trace-context-test")
    http = httpx.Client(base_url=url, timeout=60)
    with tracer.start_as_current_span("client"):
        assert trace.get_current_span().get_span_context().is_valid
        with platform_sdk.connect("cartpole", url=url, record=True) as env:
            session_id = env.session_id
            env.reset(seed=1)
            for _ in range(3):
                env.step(0)
            env.hold(1, 5, frames=False)
            handle = env.snapshot()
            env.restore(handle)
            saved = env.save_snapshot("traced")
            env.restore_saved(saved["id"])
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(0)
                done = terminated or truncated
        for path in ("/v0/envs", "/v0/sessions", f"/v0/sessions/{session_id}", f"/v0/sessions/{session_id}/trace",
                     "/v0/snapshots",
                     f"/v0/snapshots/{saved['id']}", "/v0/recordings", "/v0/usage", "/metrics"):
            assert http.get(path).status_code == 200, path
        wait_for(lambda: http.get(f"/v0/recordings/{session_id}").json().get("status") == "closed",
                 what="the recording to close")
        assert http.get(f"/v0/recordings/{session_id}/episodes/0").status_code == 200
        assert http.get(f"/v0/recordings/{session_id}/episodes/0/digests").status_code == 200
        comparison = {"env": "cartpole", "steps": 3, "window": 1, "snapshot_id": saved["id"],
                      "agents": [{"name": "traced", "session_id": session_id, "recording_id": session_id}]}
        stored = http.post("/v0/comparisons", json=comparison)
        assert stored.status_code == 201, stored.text
        for path in ("/v0/comparisons", f"/v0/comparisons/{stored.json()['id']}"):
            assert http.get(path).status_code == 200, path
        archive = http.get(f"/v0/recordings/{session_id}/archive")
        assert archive.status_code == 200 and archive.content
        assert http.get("/v0/episodes").status_code == 200  # the episode browser: across recordings
        assert http.delete(f"/v0/recordings/{session_id}").status_code == 204
        # The machines subjects: no machine is reachable here, so each answers its 4xx; the
        # requests went over the bus all the same.
        assert http.get("/v0/machines/ssh-key").status_code == 200
        assert http.get("/v0/machines").status_code == 200
        assert http.post("/v0/machines", json={"ssh": "ssh root@169.254.169.254"}).status_code == 422
        # no tunnel endpoint here (PLATFORM_TUNNEL_PORT): a machine behind NAT answers 409
        assert http.post("/v0/machines/behind-nat", json={"name": "laptop", "user": "ubuntu"}).status_code == 409
        for method, path in (("GET", ""), ("POST", "/check"), ("POST", "/accept-host-key"), ("DELETE", "")):
            assert http.request(method, f"/v0/machines/m-000000000000{path}").status_code == 404, path
        # The experiments subjects: one that ends at once on the tests' own sshd (its end is
        # published: platform.experiments.ended), and the reads of it.
        sshd.authorize(http.get("/v0/machines/ssh-key").json()["authorized_keys_line"])
        machine = http.post("/v0/machines", json={"ssh": sshd.ssh_command})
        assert machine.status_code == 201, machine.text
        repo = sshd.root / "empty.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        made = http.post("/v0/experiments", json={"machine": machine.json()["id"], "repository": str(repo),
                                                  "command": "echo traced"})
        assert made.status_code == 201, made.text
        experiment = made.json()["id"]
        wait_for(lambda: http.get(f"/v0/experiments/{experiment}").json()["ended_at"], timeout=60,
                 what="the traced experiment's end")
        assert http.get("/v0/experiments").status_code == 200
        assert http.get(f"/v0/experiments/{experiment}/logs").json()["text"] == "traced\n"
        assert http.post(f"/v0/experiments/{experiment}/cancel").json()["status"] == "succeeded"
        # A file of its run folder, as the evals service asks for an eval's logs (no route of the
        # API sends it): the request carries the client's context as the services' do.
        fetched = asyncio.run(fetch_experiment_file(nats_url, experiment, "log"))
        assert fetched.data == b"traced\n" and not fetched.HasField("error"), fetched
        # The evals subjects: running Inspect is the evals tests' (tests/test_e2e_evals.py); here
        # a task refused on this machine (cybench needs Docker), the list, and an eval nowhere.
        refused = http.post("/v0/evals", json={"task": "inspect_evals/cybench", "model": "mockllm/model",
                                               "machine": machine.json()["id"]})
        assert refused.status_code == 422, refused.text
        assert http.get("/v0/evals").status_code == 200
        for method, path in (("GET", ""), ("POST", "/cancel"), ("GET", "/logs/x.eval")):
            assert http.request(method, f"/v0/evals/ev-000000000000{path}").status_code == 404, path


async def fetch_experiment_file(nats_url: str, experiment_id: str, path: str) -> machines_pb2.FetchExperimentFileReply:
    connection = await nats.connect(nats_url)
    try:
        request = machines_pb2.FetchExperimentFileRequest(id=experiment_id, path=path, offset=0, max_bytes=1024)
        reply = await connection.request(subjects.EXPERIMENTS_FETCH, request.SerializeToString(), timeout=30,
                                         headers=inject_dict())
        return machines_pb2.FetchExperimentFileReply.FromString(reply.data)
    finally:
        await connection.close()


@pytest.fixture(scope="module")
def bus_messages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BusWatch]:
    root = tmp_path_factory.mktemp("trace-context")
    extra = {"PLATFORM_POOLS": "cartpole=1", "PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8"}  # the test's sshd
    with (running_platform(root, extra_env=extra) as stack, BusWatch(stack.nats_url) as watch,
          SshServer(root / "sshd") as sshd):
        wait_for(lambda: alive_instances(watch), timeout=60, what="the first warm pool instance")
        old = alive_instances(watch)
        restarted = time.monotonic()
        stack.restart("broker")  # reconcile: list and stop the old pool instance; the new pool: start
        wait_for(lambda: new_pool_instance_alive(watch, restarted, old), timeout=60,
                 what="the new warm pool instance")
        traced_session_and_reads(stack.url, stack.nats_url, sshd)
        beats = len(watch.messages(SUBJECTS["ENVHOST_HEARTBEAT"]))
        wait_for(lambda: len(watch.messages(SUBJECTS["ENVHOST_HEARTBEAT"])) > beats, what="one more heartbeat")
        yield watch


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_every_message_on_the_subject_carries_the_trace_context(bus_messages: BusWatch, name: str) -> None:
    pattern = SUBJECTS[name]
    messages = bus_messages.messages(pattern)
    assert messages, f"nothing was sent on {name} ({pattern.pattern}): the scenario must use it"
    lacking = [m.subject for m in messages if "traceparent" not in m.headers]
    assert not lacking, f"{len(lacking)} of {len(messages)} messages on {name} have no traceparent: {lacking[:5]}"


def test_the_subjects_are_all_checked() -> None:
    """The list the tests above run over is the module's, not a copy that can fall behind."""
    assert {"BROKER_CREATE_SESSION", "ENVHOST_HEARTBEAT", "RECORDER_SAVE_SNAPSHOT", "RECORDER_SAVE_COMPARISON",
            "MACHINES_ADD", "session_steps", "session_step_batches", "envhost_claim"} <= set(SUBJECTS)
    assert len(SUBJECTS) == 6 + 1 + 4 + 8 + 3 + 3 + 4 + 8 + 7 + 1 + 5 + 1 + 1  # ... the evals', the recent spans', metrics'
