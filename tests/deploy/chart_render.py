"""Rendering the chart with the real helm and reading what it made (tests/deploy's helpers)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

RELEASE = "platform"
NAMESPACE = "platform"
ENVS_NAMESPACE = "platform-envs"
FULLNAME = "platform-simulusion-platform"
CONTROL_PLANE = ("gateway", "broker", "recorder", "machines", "evals")
SERVICES = (*CONTROL_PLANE, "envhost")

Manifest = dict[str, Any]


def helm_run(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=120, check=False)


def render(helm: Path, chart: Path, *args: str) -> list[Manifest]:
    """`helm template` of the chart as the release `platform` in namespace `platform`."""
    done = helm_run(helm, "template", RELEASE, str(chart), "--namespace", NAMESPACE, *args)
    assert done.returncode == 0, f"helm template {' '.join(args)} failed:\n{done.stderr}"
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def one(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(found) == 1, f"{len(found)} {kind} named {name}; rendered: {[(m['kind'], m['metadata']['name']) for m in manifests]}"
    return found[0]


def of_kind(manifests: list[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m["kind"] == kind]


def deployment(manifests: list[Manifest], service: str) -> Manifest:
    return one(manifests, "Deployment", f"{FULLNAME}-{service}")


def container(manifest: Manifest) -> dict[str, Any]:
    containers = pod_spec(manifest)["containers"]
    assert len(containers) == 1, f"{manifest['metadata']['name']} has {len(containers)} containers"
    result: dict[str, Any] = containers[0]
    return result


def pod_spec(manifest: Manifest) -> dict[str, Any]:
    spec: dict[str, Any] = manifest["spec"] if manifest["kind"] == "Pod" else manifest["spec"]["template"]["spec"]
    return spec


def pod_workloads(manifests: list[Manifest]) -> Iterator[Manifest]:
    """Every manifest that makes pods."""
    return (m for m in manifests if m["kind"] in ("Deployment", "StatefulSet", "Pod", "DaemonSet", "Job"))


def env_of(manifest: Manifest) -> dict[str, Any]:
    """The container's variables: a value as a string, a secret reference as ("secret", name, key),
    a field reference as ("field", path)."""
    result: dict[str, Any] = {}
    for item in container(manifest).get("env", []):
        if "value" in item:
            result[item["name"]] = item["value"]
        elif "secretKeyRef" in item.get("valueFrom", {}):
            ref = item["valueFrom"]["secretKeyRef"]
            result[item["name"]] = ("secret", ref["name"], ref["key"])
        else:
            result[item["name"]] = ("field", item["valueFrom"]["fieldRef"]["fieldPath"])
    return result
