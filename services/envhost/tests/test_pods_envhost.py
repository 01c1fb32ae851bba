"""The env host with PLATFORM_LAUNCHER=kubernetes against the Kubernetes API emulator and its test
kubelet (platform_testing.kubernetes): sessions as pods, their failures, close, warm pool claims
and the restart's clean-up, over NATS as the broker drives them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import signal
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from envhost_testkit import CARTPOLE, EnvHostProcess, lifecycle_events, new_session_id, start_session, stop_session
from platform_contracts import subjects
from platform_contracts.values import dict_from_datamap
from platform_testing.doom_wads import write_corridor_wad
from platform_testing.kubernetes import KNOWN_IMAGE, KubernetesCluster
from platform_wads import WadRecord, open_wad_store, wad_id
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.session.v1.options_pb2 import SessionOptions

NAMESPACE = "envs"


def kube_env(cluster: KubernetesCluster, **more: str) -> dict[str, str]:
    return {"PLATFORM_LAUNCHER": "kubernetes", "PLATFORM_KUBE_API_URL": cluster.url,
            "PLATFORM_KUBE_NAMESPACE": NAMESPACE, "PLATFORM_KUBE_IMAGE": KNOWN_IMAGE,
            "PLATFORM_KUBE_READY_TIMEOUT": "60", **more}


def wait_for(condition: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout} s")


def session_pods(cluster: KubernetesCluster, session_id: str) -> list[dict[str, Any]]:
    return cluster.pods(NAMESPACE, f"simulusion.dev/session={session_id}")


@pytest.fixture
def kube_envhost(envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster) -> EnvHostProcess:
    return envhost_factory(**kube_env(kubernetes_cluster))


async def test_a_session_is_a_pod_that_its_stop_deletes(kube_envhost: EnvHostProcess, kubernetes_cluster: KubernetesCluster,
                                                       nats_client: Any, js: Any, open_stream: Any) -> None:
    session_id = new_session_id()
    reply = await start_session(nats_client, kube_envhost.host_id, session_id, kwargs_json='{"sutton_barto_reward": true}')
    assert not reply.HasField("error"), reply.error
    assert reply.spec.env_id == "CartPole-v1"
    [pod] = session_pods(kubernetes_cluster, session_id)
    labels = pod["metadata"]["labels"]
    assert labels["simulusion.dev/envhost"] == kube_envhost.host_id
    assert labels["app.kubernetes.io/component"] == "env-instance"
    container = pod["spec"]["containers"][0]
    assert "sutton_barto_reward" not in json.dumps(pod)  # the kwargs are in the Secret only
    [secret] = [s for s in kubernetes_cluster.secrets(NAMESPACE) if s["metadata"]["name"] == pod["metadata"]["name"]]
    assert secret["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    assert container["args"][container["args"].index("--kwargs-file") + 1] == "/run/simulusion/kwargs.json"

    stream = open_stream(kube_envhost.address, session_id)
    assert (await stream.reset(seed=1)).HasField("reset")
    stepped = await stream.step(0)
    assert stepped.HasField("step"), stepped
    assert stepped.step.reward == 0.0  # sutton_barto_reward reached the environment through the Secret

    assert (await stop_session(nats_client, kube_envhost.host_id, session_id)).stopped
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="pod deletion")
    wait_for(lambda: not kubernetes_cluster.secrets(NAMESPACE), what="Secret deletion")
    [started, closed] = await lifecycle_events(js, session_id, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED


async def test_an_oom_killed_pod_crashes_its_session_with_the_reason_and_log_tail(
        kube_envhost: EnvHostProcess, kubernetes_cluster: KubernetesCluster, nats_client: Any, js: Any,
        open_stream: Any) -> None:
    session_id = new_session_id()
    assert not (await start_session(nats_client, kube_envhost.host_id, session_id)).HasField("error")
    [pod] = session_pods(kubernetes_cluster, session_id)
    stream = open_stream(kube_envhost.address, session_id)
    assert (await stream.reset(seed=1)).HasField("reset")

    kubernetes_cluster.oom_kill(NAMESPACE, pod["metadata"]["name"])
    [_, crashed] = await lifecycle_events(js, session_id, 2)
    assert crashed.kind == bus_pb.SESSION_EVENT_KIND_CRASHED
    assert f"session {session_id} (cartpole) ended: pod {pod['metadata']['name']} was OOM-killed" in crashed.reason
    assert "exit code 137" in crashed.reason
    assert "READY" in crashed.log_tail  # the environment server's own log, read from the pod
    answer = await stream.step(0)
    assert answer.error.code and "OOM-killed" in answer.error.message
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="the failed pod's deletion")


@pytest.mark.parametrize(("entry", "reason"), [
    (control_pb.CatalogEntry(id="private", image="registry.invalid/simulator:1"), "cannot pull its image"),
    (control_pb.CatalogEntry(id="render", gymnasium_id="CartPole-v1", gpus=1), "cannot be scheduled (Unschedulable)"),
])
async def test_a_pod_that_cannot_start_fails_the_start_and_is_deleted(
        kube_envhost: EnvHostProcess, kubernetes_cluster: KubernetesCluster, nats_client: Any,
        entry: control_pb.CatalogEntry, reason: str) -> None:
    session_id = new_session_id()
    reply = await start_session(nats_client, kube_envhost.host_id, session_id, entry=entry)
    assert reply.error.code == "unavailable"
    assert reason in reply.error.message
    assert session_id in reply.error.message
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="pod deletion")


async def test_a_pod_not_ready_in_time_is_deleted_and_the_start_fails(
        envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster, nats_client: Any) -> None:
    host = envhost_factory(**kube_env(kubernetes_cluster, PLATFORM_KUBE_READY_TIMEOUT="0.3"))
    session_id = new_session_id()
    reply = await start_session(nats_client, host.host_id, session_id)
    assert "was not ready within PLATFORM_KUBE_READY_TIMEOUT=0.3 s" in reply.error.message
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="pod deletion")


async def test_a_claimed_warm_pod_is_relabelled_as_the_session(kube_envhost: EnvHostProcess,
                                                               kubernetes_cluster: KubernetesCluster,
                                                               nats_client: Any, open_stream: Any) -> None:
    slot_id, session_id = f"pool-cartpole-{uuid.uuid4().hex[:8]}", new_session_id()
    request = control_pb.StartInstanceRequest(session_id=slot_id, entry=CARTPOLE, pooled=True,
                                              options=SessionOptions(env_id="cartpole", kwargs_json="{}", num_envs=1))
    msg = await nats_client.request(subjects.envhost_start(kube_envhost.host_id), request.SerializeToString(), timeout=60)
    assert not control_pb.StartInstanceReply.FromString(msg.data).HasField("error")
    [warm] = kubernetes_cluster.pods(NAMESPACE, "simulusion.dev/pool=cartpole,simulusion.dev/state=warm")
    assert "simulusion.dev/session" not in warm["metadata"]["labels"]

    claim = control_pb.ClaimInstanceRequest(pool_slot=slot_id, session_id=session_id, options=SessionOptions(
        env_id="cartpole", kwargs_json="{}", num_envs=1))
    msg = await nats_client.request(subjects.envhost_claim(kube_envhost.host_id), claim.SerializeToString(), timeout=30)
    assert not control_pb.ClaimInstanceReply.FromString(msg.data).HasField("error")
    [claimed] = session_pods(kubernetes_cluster, session_id)
    assert claimed["metadata"]["name"] == warm["metadata"]["name"]
    assert claimed["metadata"]["labels"]["simulusion.dev/state"] == "claimed"
    assert int(claimed["metadata"]["resourceVersion"]) > int(warm["metadata"]["resourceVersion"])
    assert (await open_stream(kube_envhost.address, session_id).reset(seed=3)).HasField("reset")


async def test_a_restarted_env_host_deletes_the_pods_of_its_earlier_run(
        envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster, nats_client: Any) -> None:
    first = envhost_factory(**kube_env(kubernetes_cluster))
    session_id = new_session_id()
    assert not (await start_session(nats_client, first.host_id, session_id)).HasField("error")
    assert first.process is not None
    first.process.send_signal(signal.SIGKILL)  # no orderly stop: its pod stays
    first.process.wait()
    assert session_pods(kubernetes_cluster, session_id)

    second = envhost_factory(**kube_env(kubernetes_cluster, PLATFORM_ENVHOST_ID=first.host_id))
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="the leftover pod's deletion")
    assert f"deleted 1 pod(s) of an earlier run of env host {first.host_id}" in second.log()
    await asyncio.sleep(0)


DOOM_BASIC = control_pb.CatalogEntry(id="doom-basic", factory="platform_envs.doom:make_env",
                                     kwargs_json='{"scenario": "basic"}')


def stored_wad(store_dir: Path, tmp_path: Path, size: int = 0) -> WadRecord:
    path = write_corridor_wad(tmp_path / "corridor.wad", ("MAP01", "MAP02"))
    if size:  # padded past a Secret's limit (the store keeps what it is given)
        path.write_bytes(path.read_bytes() + b"\0" * size)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    record = WadRecord(wad_id(digest), "corridor.wad", len(data), digest, "PWAD", ("MAP01", "MAP02"), time.time())
    return open_wad_store(store_dir).put(record, path)


async def test_an_uploaded_wad_reaches_the_pod_in_its_secret(
        envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster, nats_client: Any,
        tmp_path: Path) -> None:
    record = stored_wad(tmp_path / "wads", tmp_path)
    host = envhost_factory(**kube_env(kubernetes_cluster, PLATFORM_WADS=str(tmp_path / "wads")))
    session_id = new_session_id()
    reply = await start_session(nats_client, host.host_id, session_id, entry=DOOM_BASIC, wad=record.id,
                                doom_map="map02")
    assert not reply.HasField("error"), reply.error
    metadata = dict_from_datamap(reply.spec.metadata)
    assert (metadata["doom_map"], metadata["wad"]) == ("MAP02", f"{record.id}.wad"), metadata
    [pod] = session_pods(kubernetes_cluster, session_id)
    [secret] = [s for s in kubernetes_cluster.secrets(NAMESPACE) if s["metadata"]["name"] == pod["metadata"]["name"]]
    assert base64.b64decode(secret["data"][f"{record.id}.wad"]) == (tmp_path / "corridor.wad").read_bytes()
    kwargs = json.loads(base64.b64decode(secret["data"]["kwargs.json"]))
    assert kwargs["wad"] == f"/run/simulusion/{record.id}.wad"  # the pod's path, not the env host's
    assert not (host.run_dir / host.host_id / f"{session_id}.wads").exists()  # no copy stays on the env host
    assert (await stop_session(nats_client, host.host_id, session_id)).stopped


async def test_a_wad_too_large_for_a_pods_secret_fails_the_start_saying_so(
        envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster, nats_client: Any,
        tmp_path: Path) -> None:
    record = stored_wad(tmp_path / "wads", tmp_path, size=1024 * 1024)
    host = envhost_factory(**kube_env(kubernetes_cluster, PLATFORM_WADS=str(tmp_path / "wads")))
    reply = await start_session(nats_client, host.host_id, new_session_id(), entry=DOOM_BASIC, wad=record.id)
    assert reply.error.code == "invalid_argument", reply.error
    assert f"{record.id}.wad {record.size / 1024:.0f} KiB" in reply.error.message
    assert "a pod gets them in its Secret, which holds at most 1024 KiB" in reply.error.message
    assert not kubernetes_cluster.pods(NAMESPACE)


@pytest.mark.parametrize(("env", "line"), [
    ({"PLATFORM_KUBE_IMAGE": ""}, "PLATFORM_LAUNCHER=kubernetes needs PLATFORM_KUBE_IMAGE"),
    ({"PLATFORM_KUBE_TOLERATIONS": '{"key": "gpu"}'}, "bad setting PLATFORM_KUBE_TOLERATIONS: "),
    ({"PLATFORM_KUBE_API_URL": "http://127.0.0.1:9"}, "cannot list pods in namespace envs of the Kubernetes API "
                                                      "http://127.0.0.1:9"),
])
def test_a_bad_kubernetes_setting_stops_the_env_host_with_one_line(kubernetes_cluster: KubernetesCluster,
                                                                   nats_server: Any, env: dict[str, str],
                                                                   line: str) -> None:
    host = EnvHostProcess(nats_server.url, **kube_env(kubernetes_cluster, **env))
    try:
        with pytest.raises(RuntimeError, match="env host exited with 1"):
            host.start()
        [error] = [entry for entry in host.log().splitlines() if entry.startswith("platform_envhost: error:")]
        assert line in error
    finally:
        host.cleanup()


async def test_env_pods_are_owned_by_the_env_hosts_pod_and_go_with_it(
        envhost_factory: Callable[..., EnvHostProcess], kubernetes_cluster: KubernetesCluster, nats_client: Any,
        js: Any) -> None:
    own_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": socket.gethostname(), "namespace": NAMESPACE,
        "labels": {"app.kubernetes.io/component": "envhost"}},
        "spec": {"containers": [{"name": "envhost", "image": "registry.invalid/not-run-here:1"}]}}
    with httpx.Client(base_url=kubernetes_cluster.url) as http:
        envhost_pod = http.post(f"/api/v1/namespaces/{NAMESPACE}/pods", json=own_pod).json()
        host = envhost_factory(**kube_env(kubernetes_cluster))
        session_id = new_session_id()
        assert not (await start_session(nats_client, host.host_id, session_id)).HasField("error")
        [pod] = session_pods(kubernetes_cluster, session_id)
        assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": socket.gethostname(),
                                                       "uid": envhost_pod["metadata"]["uid"]}]
        http.delete(f"/api/v1/namespaces/{NAMESPACE}/pods/{socket.gethostname()}").raise_for_status()
    wait_for(lambda: not session_pods(kubernetes_cluster, session_id), what="the garbage collection of the env pod")
    [_, crashed] = await lifecycle_events(js, session_id, 2)
    assert crashed.kind == bus_pb.SESSION_EVENT_KIND_CRASHED and "was deleted" in crashed.reason
