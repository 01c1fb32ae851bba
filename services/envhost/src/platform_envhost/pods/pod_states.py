"""What a pod's status says about its instance: still starting, serving at an address, or
failed (and why, in words a session's 410 answer can carry).

Read from the pod as the API gives it (a dict: `status.phase`, `conditions`,
`containerStatuses[].state`), so the watch and the tests judge pods alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_envhost.pods.pod_manifests import INSTANCE_PORT_ANNOTATION

# A container waiting for one of these will not start without someone changing the pod.
IMAGE_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
CONFIG_FAILURES = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")


@dataclass(frozen=True)
class PodState:
    """One reading of a pod.

    Attributes:
        address: "<pod IP>:<port>" once it is Ready ("" before).
        failure: why it cannot serve (or stopped serving); "" while it is fine.
        exit_code: its container's exit code once terminated (None before; 137 for an OOM kill).
        cluster_side: the failure is the cluster's (unschedulable, image pull, deleted), not
            the environment's own.
    """

    address: str = ""
    failure: str = ""
    exit_code: int | None = None
    cluster_side: bool = False

    @property
    def ended(self) -> bool:
        return bool(self.failure)


def pod_state(pod: dict[str, Any], instance_port: int) -> PodState:
    """Read `pod` (a Pod as the API returns it): its failure first, else its address when Ready."""
    name = pod.get("metadata", {}).get("name", "?")
    status = pod.get("status") or {}
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return PodState(failure=f"pod {name} is being deleted", cluster_side=True)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False" \
                and condition.get("reason") == "Unschedulable":
            return PodState(failure=f"pod {name} cannot be scheduled (Unschedulable): "
                                    f"{condition.get('message') or 'no node fits it'}", cluster_side=True)
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        waiting = state.get("waiting") or {}
        reason = waiting.get("reason", "")
        if reason in IMAGE_FAILURES:
            return PodState(failure=f"pod {name} cannot pull its image {container.get('image', '')}: {reason}"
                                    + (f": {waiting['message']}" if waiting.get("message") else ""), cluster_side=True)
        if reason in CONFIG_FAILURES:
            return PodState(failure=f"pod {name} cannot start its container: {reason}"
                                    + (f": {waiting['message']}" if waiting.get("message") else ""), cluster_side=True)
        terminated = state.get("terminated")
        if terminated:
            return _terminated(name, terminated)
    phase = status.get("phase", "")
    if phase in ("Failed", "Succeeded"):
        return PodState(failure=f"pod {name} {phase.lower()}: {status.get('reason') or ''} "
                                f"{status.get('message') or ''}".rstrip(": ").strip(), cluster_side=True)
    if phase == "Running" and status.get("podIP") and _ready(status):
        annotations = pod.get("metadata", {}).get("annotations") or {}
        port = annotations.get(INSTANCE_PORT_ANNOTATION) or _container_port(pod) or instance_port
        return PodState(address=f"{status['podIP']}:{port}")
    return PodState()


def _terminated(name: str, terminated: dict[str, Any]) -> PodState:
    code = terminated.get("exitCode")
    reason = terminated.get("reason") or ""
    if reason == "OOMKilled":
        failure = f"pod {name} was OOM-killed: its memory limit was reached (exit code {code})"
    else:
        failure = f"pod {name} exited with code {code}" + (f" ({reason})" if reason else "")
    if terminated.get("message"):
        failure += f": {terminated['message']}"
    return PodState(failure=failure, exit_code=code if isinstance(code, int) else None)


def _ready(status: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _container_port(pod: dict[str, Any]) -> int | None:
    """The env container's declared port (an image entry's 50051)."""
    for container in pod.get("spec", {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == "env-protocol":
                value = port.get("containerPort")
                return value if isinstance(value, int) else None
    return None
