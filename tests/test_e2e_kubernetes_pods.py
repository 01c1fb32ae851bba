"""The whole platform with PLATFORM_LAUNCHER=kubernetes: every session's instance is a pod of the
Kubernetes API emulator, run by its test kubelet (platform_testing.kubernetes). Sessions are
created, stepped with the SDK, recorded, claimed from a warm pool by two creates at once,
crashed (OOM-killed; an image that cannot be pulled; a GPU entry no node can take), closed and
idled out (the pod is deleted), and cleaned up after an env host restart."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import platform_sdk
import pytest
from platform_testing.kubernetes import KNOWN_IMAGE, KubernetesCluster
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

NAMESPACE = "envs"
ENVHOST_ID = "kube-envhost-1"
CATALOG = """
[envs.private-sim]
image = "registry.invalid/private/simulator:1"

[envs.gpu-cartpole]
gymnasium_id = "CartPole-v1"
gpus = 1
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubernetesCluster]:
    cluster = KubernetesCluster(tmp_path_factory.mktemp("kube")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def stack(cluster: KubernetesCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("platform")
    catalog = Path(root, "catalog.toml")
    catalog.write_text(CATALOG)
    env = {"PLATFORM_LAUNCHER": "kubernetes", "PLATFORM_KUBE_API_URL": cluster.url,
           "PLATFORM_KUBE_NAMESPACE": NAMESPACE, "PLATFORM_KUBE_IMAGE": KNOWN_IMAGE,
           "PLATFORM_ENVHOST_ID": ENVHOST_ID, "PLATFORM_CATALOG": str(catalog),
           "PLATFORM_POOLS": "cartpole=1", "PLATFORM_IDLE_TIMEOUT": "10"}
    with running_platform(root, extra_env=env) as stack:
        yield stack
    assert not cluster.pods(NAMESPACE), "the platform's stop deletes every env pod"


def pods_of(cluster: KubernetesCluster, session_id: str) -> list[dict[str, Any]]:
    return cluster.pods(NAMESPACE, f"simulusion.dev/session={session_id}")


def warm_pods(cluster: KubernetesCluster) -> list[dict[str, Any]]:
    return cluster.pods(NAMESPACE, "simulusion.dev/pool=cartpole,simulusion.dev/state=warm")


def test_a_session_runs_in_a_pod_is_recorded_and_its_close_deletes_the_pod(stack, cluster):
    with platform_sdk.connect("cartpole", url=stack.url, record=True, kwargs={"max_episode_steps": 20}) as env:
        sid = env.session_id
        [pod] = pods_of(cluster, sid)
        assert pod["metadata"]["labels"]["simulusion.dev/envhost"] == ENVHOST_ID
        observation, _ = env.reset(seed=0)
        assert observation.shape == (4,)
        for _ in range(5):
            env.step(1)
    wait_for(lambda: not pods_of(cluster, sid), timeout=15, what="the closed session's pod to be deleted")
    listing = wait_for(lambda: httpx.get(f"{stack.url}/v0/recordings", params={"session_id": sid}).json()["data"],
                       timeout=30, what="the session's recording")
    assert listing[0]["session_id"] == sid


def test_two_creates_at_once_one_warm_pod_exactly_one_claims_it(stack, cluster):
    [warm] = wait_for(lambda: warm_pods(cluster), timeout=90, what="a warm cartpole pod")
    sessions: list[Any] = []

    def create() -> None:
        sessions.append(platform_sdk.connect("cartpole", url=stack.url))

    creators = [threading.Thread(target=create) for _ in range(2)]
    for thread in creators:
        thread.start()
    for thread in creators:
        thread.join(120)
    try:
        assert len(sessions) == 2
        names = {sid: pods_of(cluster, sid)[0]["metadata"]["name"] for sid in (s.session_id for s in sessions)}
        winners = [sid for sid, name in names.items() if name == warm["metadata"]["name"]]
        assert len(winners) == 1, names  # the warm pod went to one session, the other got a pod of its own
        [claimed] = pods_of(cluster, winners[0])
        assert claimed["metadata"]["labels"]["simulusion.dev/state"] == "claimed"
        for env in sessions:
            env.reset(seed=1)
            env.step(0)
        wait_for(lambda: warm_pods(cluster), timeout=90, what="the pool to be refilled with a new warm pod")
    finally:
        for env in sessions:
            env.close()


def test_an_oom_killed_pod_answers_410_with_the_reason_and_its_log_tail(stack, cluster):
    env = platform_sdk.connect("cartpole", url=stack.url)
    env.reset(seed=0)
    [pod] = pods_of(cluster, env.session_id)
    cluster.oom_kill(NAMESPACE, pod["metadata"]["name"])
    with pytest.raises(platform_sdk.EnvironmentCrashedError) as caught:
        for _ in range(200):
            env.step(0)
    assert "OOM-killed" in str(caught.value) and "READY" in caught.value.log_tail
    rest = httpx.post(f"{stack.url}/v0/sessions/{env.session_id}/step", json={"action": 0})
    assert rest.status_code == 410 and "OOM-killed" in rest.text
    session = httpx.get(f"{stack.url}/v0/sessions/{env.session_id}").json()
    assert session["state"] == "crashed" and "exit code 137" in session["reason"]
    wait_for(lambda: not pods_of(cluster, env.session_id), timeout=15, what="the OOM-killed pod to be deleted")
    env.close()


@pytest.mark.parametrize(("env_id", "reason"), [
    ("private-sim", "cannot pull its image registry.invalid/private/simulator:1"),
    ("gpu-cartpole", "cannot be scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient nvidia.com/gpu"),
])
def test_a_pod_that_cannot_start_fails_the_create_with_the_reason(stack, cluster, env_id, reason):
    answer = httpx.post(f"{stack.url}/v0/sessions", json={"env_id": env_id}, timeout=120)
    assert answer.status_code == 503, answer.text
    assert reason in answer.text
    closed = [s for s in httpx.get(f"{stack.url}/v0/sessions", params={"include_closed": True}).json()["data"]
              if s["env_id"] == env_id]
    assert closed and reason in closed[-1]["reason"] and closed[-1]["state"] == "closed"
    assert not [p for p in cluster.pods(NAMESPACE) if env_id in str(p["spec"])], "no pod is left of a failed start"


def test_an_idle_session_is_closed_and_its_pod_deleted(stack, cluster):
    env = platform_sdk.connect("cartpole", url=stack.url)
    env.reset(seed=0)
    assert pods_of(cluster, env.session_id)
    state = wait_for(lambda: (s := httpx.get(f"{stack.url}/v0/sessions/{env.session_id}").json())["state"] == "closed"
                     and s, timeout=60, what="the idle session to close")
    assert "idle" in state["reason"]
    wait_for(lambda: not pods_of(cluster, env.session_id), timeout=15, what="the idle session's pod to be deleted")
    env.close()


def test_an_env_host_restart_deletes_its_orphan_pods_and_the_broker_closes_their_sessions(stack, cluster):
    env = platform_sdk.connect("cartpole", url=stack.url)
    env.reset(seed=0)
    sid = env.session_id
    stack.kill("envhost", signal.SIGKILL)  # pods outlive their env host's process
    assert pods_of(cluster, sid)
    stack.start_service("envhost")  # the same PLATFORM_ENVHOST_ID: it deletes the pods of its earlier run
    wait_for(lambda: not pods_of(cluster, sid), timeout=30, what="the orphan pod to be deleted")
    wait_for(lambda: "pod(s) of an earlier run of env host kube-envhost-1" in stack.log("envhost"), timeout=15,
             what="the env host's line naming the pods it deleted")
    stack.restart("broker")
    state = wait_for(lambda: (s := httpx.get(f"{stack.url}/v0/sessions/{sid}").json())["state"] != "running" and s,
                     timeout=60, what="the broker to end the session whose pod is gone")
    assert state["state"] in ("closed", "crashed")
    env.close()
