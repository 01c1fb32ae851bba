"""The Pod of one instance and its Secret, as Kubernetes manifests (plain dicts).

A catalog entry's pod runs `python -m platform_sdk --gym-id|--factory ... --kwargs-file
/run/simulusion/kwargs.json --listen 0.0.0.0:<PLATFORM_KUBE_INSTANCE_PORT>` in
`PLATFORM_KUBE_IMAGE`; an image entry's pod runs its own image, whose entry point is the
environment server on port 50051 (as with `docker run`), with `--kwargs-file` when it has kwargs.

The kwargs never go on the command line or in an environment variable of the pod spec (anyone
who may read pods would read them): they, and the uploaded WADs a Doom session plays, are the
data of a Secret of the pod's own name, mounted read-only at `/run/simulusion`. The Secret is
created once the pod exists, with the pod as its owner, so Kubernetes deletes it with the pod;
the kubelet starts the container only once the Secret is there.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platform_sdk.launch.containers import CONTAINER_PORT
from platform_sdk.launch.instance_processes import LaunchSpec, server_command, server_options

from platform_envhost.instance_env import kept_variables
from platform_envhost.pods.kube_settings import KubeSettings

# Labels and annotations every env pod carries (the chart's NetworkPolicy selects by COMPONENT).
APP_NAME_LABEL = "app.kubernetes.io/name"
APP_NAME = "simulusion-platform"
COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENT = "env-instance"
ENVHOST_COMPONENT = "envhost"  # the component label of the env host's own pod (the chart's)
ENVHOST_LABEL = "simulusion.dev/envhost"
SESSION_LABEL = "simulusion.dev/session"
POOL_LABEL = "simulusion.dev/pool"
STATE_LABEL = "simulusion.dev/state"
WARM, CLAIMED = "warm", "claimed"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
# The port the instance serves on, when it is not the pod IP's PLATFORM_KUBE_INSTANCE_PORT (a test
# kubelet that runs pods as local processes on one address sets it; see docs/kubernetes.md).
INSTANCE_PORT_ANNOTATION = "simulusion.dev/instance-port"

CONTAINER_NAME = "env"
FILES_VOLUME = "instance-files"
FILES_DIR = "/run/simulusion"
KWARGS_KEY = "kwargs.json"
RUN_AS = 10001
GPU_RESOURCE = "nvidia.com/gpu"
# A Secret holds at most 1 MiB of data (the API server refuses more): the kwargs and WADs together.
MAX_SECRET_BYTES = 1024 * 1024
_UNSAFE_NAME = re.compile(r"[^a-z0-9-]+")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


class ManifestError(ValueError):
    """A pod cannot be made for this spec (one line: what and why)."""


@dataclass
class PodPlan:
    """What one pod is to run and how it is known."""

    spec: LaunchSpec
    name: str  # the pod's (and its Secret's) name
    envhost_id: str
    session_id: str = ""  # a session's pod
    pool_env: str = ""  # or a warm pool pod of this env id (its slot id in `slot`)
    slot: str = ""
    gpus: int = 0
    files: dict[str, bytes] = field(default_factory=dict)  # more files for the Secret (WADs), by key
    owner: dict[str, str] | None = None  # the env host's own pod (name, uid), when it runs as one

    @property
    def labels(self) -> dict[str, str]:
        labels = {APP_NAME_LABEL: APP_NAME, COMPONENT_LABEL: COMPONENT, ENVHOST_LABEL: self.envhost_id}
        if self.pool_env:
            labels |= {POOL_LABEL: self.pool_env, STATE_LABEL: WARM}
        else:
            labels[SESSION_LABEL] = self.session_id
        for key, value in labels.items():
            if not _LABEL_VALUE.match(value):
                raise ManifestError(f"{value!r} cannot be the value of the pod label {key} (63 letters, digits, "
                                    "'-', '_' or '.' at most, beginning and ending with a letter or digit)")
        return labels


def pod_name(instance_name: str) -> str:
    """A pod name for an instance (a session or pool slot id): `env-<id>-<random>`, lower-case,
    at most 63 characters (a DNS label: it is the pod's host name)."""
    stem = _UNSAFE_NAME.sub("-", instance_name.lower()).strip("-")[:44] or "instance"
    return f"env-{stem}-{secrets.token_hex(4)}"


def files_path(key: str) -> str:
    """Where a file of the pod's Secret is, inside the pod."""
    return f"{FILES_DIR}/{key}"


def secret_data(plan: PodPlan) -> dict[str, bytes]:
    """The Secret's files: the kwargs' JSON and the extra files.

    Raises:
        ManifestError: they hold more than a Secret may (MAX_SECRET_BYTES), naming the sizes.
    """
    data = {KWARGS_KEY: json.dumps(plan.spec.kwargs).encode(), **plan.files}
    total = sum(len(value) for value in data.values())
    if total > MAX_SECRET_BYTES:
        sizes = ", ".join(f"{key} {len(value) / 1024:.0f} KiB" for key, value in data.items())
        raise ManifestError(f"the files of this instance ({sizes}) are {total / 1024:.0f} KiB; a pod gets them in "
                            f"its Secret, which holds at most {MAX_SECRET_BYTES // 1024} KiB")
    return data


def container_args(plan: PodPlan, instance_port: int) -> tuple[list[str], int]:
    """The container's command line (empty for an image entry: its own entry point) and
    arguments, and the port it serves on."""
    spec = plan.spec
    kwargs_file = files_path(KWARGS_KEY)
    if spec.image:
        args = (["--kwargs-file", kwargs_file] if spec.kwargs else []) + server_options(spec)
        return args, CONTAINER_PORT
    command = server_command(spec, f"0.0.0.0:{instance_port}", "grpc", Path(kwargs_file))
    return ["python", *command[1:]], instance_port


def pod_manifest(plan: PodPlan, settings: KubeSettings) -> dict[str, Any]:
    """The Pod of `plan` (restricted security: a non-root uid, no privilege escalation, no
    capabilities, the runtime's seccomp profile, no service account token).

    Raises:
        ManifestError: a catalog entry's pod with no PLATFORM_KUBE_IMAGE, or a bad label value.
    """
    spec = plan.spec
    image = spec.image or settings.image
    if not image:
        raise ManifestError("PLATFORM_KUBE_IMAGE is not set: the environments image that runs catalog entries "
                            "in pods (simulusion-platform-envs)")
    args, port = container_args(plan, settings.instance_port)
    resources: dict[str, dict[str, str]] = {
        "requests": {"cpu": settings.cpu_request, "memory": settings.memory_request},
        "limits": {"cpu": settings.cpu_limit, "memory": settings.memory_limit},
    }
    if plan.gpus > 0:
        resources["limits"][GPU_RESOURCE] = str(plan.gpus)
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": image,
        "imagePullPolicy": settings.image_pull_policy,
        "ports": [{"name": "env-protocol", "containerPort": port, "protocol": "TCP"}],
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"},
                *({"name": name, "value": value} for name, value in kept_variables().items())],
        "resources": resources,
        "readinessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 1, "failureThreshold": 1},
        "securityContext": {
            "runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [{"name": FILES_VOLUME, "mountPath": FILES_DIR, "readOnly": True}],
    }
    if spec.image:
        container["args"] = args
    else:
        container["command"], container["args"] = args[:1], args[1:]
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "serviceAccountName": settings.service_account,
        "securityContext": {
            "runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [{"name": FILES_VOLUME, "secret": {"secretName": plan.name, "defaultMode": 0o440}}],
    }
    if selector := settings.node_selector_for(plan.gpus):
        pod_spec["nodeSelector"] = selector
    if tolerations := settings.tolerations_for(plan.gpus):
        pod_spec["tolerations"] = tolerations
    if settings.pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": name} for name in settings.pull_secrets]
    annotations = {SAFE_TO_EVICT: "false"}
    if plan.slot:
        annotations["simulusion.dev/pool-slot"] = plan.slot
    metadata: dict[str, Any] = {"name": plan.name, "namespace": settings.namespace, "labels": plan.labels,
                                "annotations": annotations}
    if plan.owner is not None:  # deleted with the env host's pod
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", **plan.owner}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


def secret_manifest(plan: PodPlan, namespace: str, owner: Mapping[str, Any]) -> dict[str, Any]:
    """The pod's Secret (its files), owned by the pod `owner` (its metadata: name and uid), so
    that it is deleted with it."""
    data = secret_data(plan)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": plan.name, "namespace": namespace, "labels": plan.labels,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": owner["name"], "uid": owner["uid"]}],
        },
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }
