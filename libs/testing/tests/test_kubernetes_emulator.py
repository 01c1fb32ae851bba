"""What platform_testing.kubernetes adds to kmock's emulator, over plain HTTP: resource versions
and 409 conflicts, label selectors, pod logs, and the test kubelet's verdicts on pods."""

from __future__ import annotations

import time
from typing import Any

import httpx
from platform_testing.kubernetes import KNOWN_IMAGE, KubernetesCluster

PODS = "/api/v1/namespaces/ns/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}


def pod(name: str, image: str = KNOWN_IMAGE, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": {"containers": [{"name": "env", "image": image, "command": ["sleep"], "args": ["30"]}]}}


def wait_for_status(http: httpx.Client, name: str, check: Any, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = http.get(f"{PODS}/{name}").json()
        if check(current.get("status") or {}):
            return current
        time.sleep(0.05)
    raise AssertionError(f"pod {name}: no such status within {timeout} s: {current.get('status')}")


def test_a_stale_resource_version_is_a_409_conflict(kubernetes_cluster: KubernetesCluster) -> None:
    with httpx.Client(base_url=kubernetes_cluster.url) as http:
        created = http.post(PODS, json=pod("p1", image="unknown/image", role="a")).json()
        assert created["metadata"]["uid"]
        # The kubelet writes the pod's status (ErrImagePull, then ImagePullBackOff, its last word
        # on such a pod): each write advances the version, so take it once the kubelet is done.
        settled = wait_for_status(http, "p1", lambda status: any(
            (c.get("state", {}).get("waiting") or {}).get("reason") == "ImagePullBackOff"
            for c in status.get("containerStatuses", [])))
        version = settled["metadata"]["resourceVersion"]
        assert int(version) > int(created["metadata"]["resourceVersion"])
        first = http.patch(f"{PODS}/p1", headers=MERGE,
                           json={"metadata": {"resourceVersion": version, "labels": {"role": "b"}}})
        assert first.status_code == 200 and int(first.json()["metadata"]["resourceVersion"]) > int(version)
        second = http.patch(f"{PODS}/p1", headers=MERGE,
                            json={"metadata": {"resourceVersion": version, "labels": {"role": "c"}}})
        assert second.status_code == 409
        assert http.get(f"{PODS}/p1").json()["metadata"]["labels"]["role"] == "b"


def test_lists_take_a_label_selector(kubernetes_cluster: KubernetesCluster) -> None:
    with httpx.Client(base_url=kubernetes_cluster.url) as http:
        for name, role in (("a1", "x"), ("a2", "y")):
            http.post(PODS, json=pod(name, image="unknown/image", role=role)).raise_for_status()
        names = [p["metadata"]["name"] for p in http.get(PODS, params={"labelSelector": "role=y"}).json()["items"]]
        assert names == ["a2"]
        assert len(http.get(PODS, params={"labelSelector": "role!=y"}).json()["items"]) == 1


def test_the_kubelet_judges_images_and_gpus_and_runs_the_rest(kubernetes_cluster: KubernetesCluster) -> None:
    with httpx.Client(base_url=kubernetes_cluster.url) as http:
        http.post(PODS, json=pod("pull", image="registry.invalid/x:1")).raise_for_status()
        gpu = pod("gpu")
        gpu["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
        http.post(PODS, json=gpu).raise_for_status()
        http.post(PODS, json=pod("runs")).raise_for_status()
        pulled = wait_for_status(http, "pull", lambda s: any(
            c["state"].get("waiting", {}).get("reason") == "ImagePullBackOff" for c in s.get("containerStatuses", [])))
        assert pulled["status"]["phase"] == "Pending"
        wait_for_status(http, "gpu", lambda s: any(
            c.get("reason") == "Unschedulable" and "Insufficient nvidia.com/gpu" in c.get("message", "")
            for c in s.get("conditions", [])))
        running = wait_for_status(http, "runs", lambda s: s.get("phase") == "Running")
        assert running["status"]["podIP"] == "127.0.0.1"
        kubernetes_cluster.oom_kill("ns", "runs")
        killed = wait_for_status(http, "runs", lambda s: s.get("phase") == "Failed")
        assert killed["status"]["containerStatuses"][0]["state"]["terminated"] == {"exitCode": 137,
                                                                                    "reason": "OOMKilled"}
        assert http.get(f"{PODS}/runs/log", params={"tailLines": "5"}).status_code == 200
