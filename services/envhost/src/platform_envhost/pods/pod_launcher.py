"""Env pods through the Kubernetes API (lightkube's async client): create a pod and its Secret
and wait until it serves, claim a warm one, delete one, and at start delete this env host's
pods that no session of it owns.

Every pod carries the label `simulusion.dev/envhost=<this host's id>`; one watch over that label
(`pod_watch.PodWatch`) tells every waiter how its pod is doing.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

import httpx2
from lightkube import AsyncClient, KubeConfig, codecs
from lightkube.config.models import Cluster, User
from lightkube.resources.core_v1 import Pod, Secret
from lightkube.types import PatchType
from platform_sdk.launch.instance_processes import LaunchError

from platform_envhost.pods.kube_settings import KubeSettings
from platform_envhost.pods.pod_instances import PodInstance
from platform_envhost.pods.pod_manifests import (
    CLAIMED,
    COMPONENT_LABEL,
    CONTAINER_NAME,
    ENVHOST_COMPONENT,
    ENVHOST_LABEL,
    SESSION_LABEL,
    STATE_LABEL,
    ManifestError,
    PodPlan,
    pod_manifest,
    pod_name,
    secret_manifest,
)
from platform_envhost.pods.pod_states import PodState, pod_state
from platform_envhost.pods.pod_watch import PodWatch

log = logging.getLogger(__name__)

FIELD_MANAGER = "simulusion-envhost"
LOG_TAIL_LINES = 40
API_TIMEOUT_S = 15.0


class PodUnavailableError(LaunchError):
    """A pod did not start for the cluster's reasons (unschedulable, image pull error, deleted,
    not ready in time): not the environment's fault."""


class ClaimConflict(Exception):
    """The warm pod changed since it was read (another claimer took it): try another."""


def kube_config(settings: KubeSettings) -> KubeConfig:
    """PLATFORM_KUBE_API_URL when set; else the pod's service account, else ~/.kube/config.

    Raises:
        LaunchError: none of them is there (one line naming what was tried).
    """
    if settings.api_url:
        # no credentials: an API server that takes none (a test's emulator, `kubectl proxy`)
        return KubeConfig.from_one(cluster=Cluster(server=settings.api_url), user=User(), namespace=settings.namespace)
    try:
        return KubeConfig.from_env()
    except Exception as exc:  # noqa: BLE001 - lightkube raises ConfigError or OSError
        raise LaunchError("PLATFORM_LAUNCHER=kubernetes finds no Kubernetes API: not in a pod, no ~/.kube/config "
                          f"and no PLATFORM_KUBE_API_URL ({exc})") from None


class PodLauncher:
    """This env host's env pods in `settings.namespace`.

    Args:
        settings: the PLATFORM_KUBE_* settings.
        envhost_id: this env host's id (every pod's `simulusion.dev/envhost` label).
        run_dir: the env host's run folder (a pod instance's `log_path` is named in it; no file).
    """

    def __init__(self, settings: KubeSettings, envhost_id: str, run_dir: Path) -> None:
        self.settings = settings
        self.envhost_id = envhost_id
        self.run_dir = run_dir
        self._client: AsyncClient | None = None
        self._watch: PodWatch | None = None
        # The env host's own pod, when it runs as one in the env pods' namespace: every env pod
        # names it as its owner, so Kubernetes deletes them when the env host's pod goes.
        self.owner: dict[str, str] | None = None

    @property
    def client(self) -> AsyncClient:
        if self._client is None:
            raise RuntimeError("PodLauncher.start() was not called")
        return self._client

    async def start(self) -> list[str]:
        """Connect, start watching this host's pods, and delete those of an earlier run of this
        env host (a new one has no session yet: none is its). Returns the names deleted.

        Raises:
            LaunchError: no Kubernetes API, or it refused to list pods (one line).
        """
        config = kube_config(self.settings)
        self._client = AsyncClient(config, namespace=self.settings.namespace, field_manager=FIELD_MANAGER,
                                   timeout=httpx2.Timeout(API_TIMEOUT_S))
        try:
            leftovers = [pod async for pod in self.client.list(Pod, namespace=self.settings.namespace,
                                                                labels=self._own())]
        except httpx2.HTTPError as exc:
            raise LaunchError(f"cannot list pods in namespace {self.settings.namespace} of the Kubernetes API "
                              f"{self.settings.api_url or '(in-cluster or ~/.kube/config)'}: {exc}") from None
        self.owner = await self._own_pod()
        self._watch = PodWatch(self.client, self.settings.namespace, self._own())
        self._watch.start()
        names = [pod.metadata.name for pod in leftovers if pod.metadata and pod.metadata.name]
        await asyncio.gather(*(self.delete(name) for name in names))
        return names

    async def close(self) -> None:
        if self._watch is not None:
            await self._watch.close()
        if self._client is not None:
            await self._client.close()

    async def _own_pod(self) -> dict[str, str] | None:
        """This env host's pod (its name is the host name) when it is in the env pods' namespace
        and labelled as an env host's; None otherwise (not in a pod, another namespace: an
        owner must be in its dependents' namespace)."""
        try:
            pod = await self.client.get(Pod, socket.gethostname(), namespace=self.settings.namespace)
        except httpx2.HTTPError:
            return None
        labels = (pod.metadata.labels if pod.metadata else None) or {}
        if labels.get(COMPONENT_LABEL) != ENVHOST_COMPONENT or pod.metadata is None or not pod.metadata.uid:
            return None
        return {"name": pod.metadata.name or "", "uid": pod.metadata.uid}

    def _own(self) -> dict[str, Any]:  # a label selector, as lightkube types it
        return {ENVHOST_LABEL: self.envhost_id}

    @property
    def watch(self) -> PodWatch:
        if self._watch is None:
            raise RuntimeError("PodLauncher.start() was not called")
        return self._watch

    async def launch(self, plan: PodPlan, ready_timeout: float | None = None) -> PodInstance:
        """Create the pod of `plan` and its Secret, and wait until it is Ready (its server
        listens). `plan.name` is set here.

        Raises:
            LaunchError: the pod could not be made, failed (unschedulable, image pull error,
                exited, OOM-killed, deleted) or was not Ready within the ready timeout; it is then
                deleted, and the error carries its log tail.
        """
        timeout = self.settings.ready_timeout if ready_timeout is None else ready_timeout
        plan.name = pod_name(plan.session_id or plan.slot)
        plan.owner = self.owner
        try:
            manifest = pod_manifest(plan, self.settings)
            secret_manifest(plan, self.settings.namespace, {"name": plan.name, "uid": "-"})  # its size, before any pod
        except ManifestError as exc:
            raise LaunchError(str(exc)) from None
        try:
            created = await self.client.create(codecs.from_dict(manifest))
            assert created.metadata is not None
            owner = {"name": plan.name, "uid": created.metadata.uid or ""}
            await self.client.create(codecs.from_dict(secret_manifest(plan, self.settings.namespace, owner)))
        except httpx2.HTTPError as exc:
            await self.delete(plan.name)
            raise LaunchError(f"the Kubernetes API refused pod {plan.name}: {exc}") from None
        try:
            state = await self._until_serving(plan.name, timeout)
        except BaseException:  # cancelled: leave no pod behind
            await self.delete(plan.name)
            raise
        if state.failure:
            tail = await self.log_tail(plan.name)
            await self.delete(plan.name)
            raise (PodUnavailableError if state.cluster_side else LaunchError)(state.failure, tail)
        return PodInstance(self, plan.name, state.address, self.run_dir / f"{plan.name}.log")

    async def _until_serving(self, name: str, timeout: float) -> PodState:
        port = self.settings.instance_port

        def serving_or_failed(pod: dict[str, Any] | None) -> bool:
            if pod is None:
                return True
            state = pod_state(pod, port)
            return bool(state.address or state.failure)

        if not await self.watch.until(name, serving_or_failed, timeout):
            return PodState(failure=f"pod {name} was not ready within PLATFORM_KUBE_READY_TIMEOUT={timeout:g} s"
                                    f"{_phase(self.watch.latest(name))}", cluster_side=True)
        pod = self.watch.latest(name)
        if pod is None:
            return PodState(failure=f"pod {name} was deleted before it was ready", cluster_side=True)
        return pod_state(pod, port)

    async def until_ended(self, name: str) -> PodState:
        """Wait until the pod `name` fails, exits or is deleted; returns how it ended."""
        port = self.settings.instance_port

        def ended(pod: dict[str, Any] | None) -> bool:
            return pod is None or pod_state(pod, port).ended

        await self.watch.until(name, ended, None)
        pod = self.watch.latest(name)
        if pod is None:
            return PodState(failure=f"pod {name} was deleted", cluster_side=True)
        return pod_state(pod, port)

    async def claim(self, instance: PodInstance, session_id: str) -> None:
        """Label the warm pod `instance` as claimed by `session_id`, guarded by the resource
        version last seen: a pod someone changed since (another claimer) is not taken twice.

        Raises:
            ClaimConflict: the API answered 409 Conflict, or the pod is gone or not warm.
            LaunchError: the API refused otherwise.
        """
        pod = self.watch.latest(instance.name)
        if pod is None:
            raise ClaimConflict(f"pod {instance.name} is gone")
        metadata = pod.get("metadata", {})
        if (metadata.get("labels") or {}).get(STATE_LABEL) == CLAIMED:
            raise ClaimConflict(f"pod {instance.name} is claimed already")
        patch = {"metadata": {"resourceVersion": metadata.get("resourceVersion", ""),
                              "labels": {STATE_LABEL: CLAIMED, SESSION_LABEL: session_id}}}
        try:
            await self.client.patch(Pod, instance.name, patch, namespace=self.settings.namespace,
                                    patch_type=PatchType.MERGE)
        except httpx2.HTTPStatusError as exc:  # lightkube's ApiError among them
            if exc.response.status_code in (404, 409):
                raise ClaimConflict(f"pod {instance.name} changed since it was read: {exc.response.status_code} "
                                    f"{exc.response.reason_phrase}") from None
            raise LaunchError(f"claiming pod {instance.name}: {exc}") from None
        except httpx2.HTTPError as exc:
            raise LaunchError(f"claiming pod {instance.name}: {exc}") from None

    async def delete(self, name: str, grace_s: float | None = None) -> None:
        """Delete the pod `name` and its Secret (gone already: nothing to do); never raises."""
        grace = None if grace_s is None else max(0, int(grace_s))
        for resource in (Pod, Secret):
            try:
                await self.client.delete(resource, name, namespace=self.settings.namespace, grace_period=grace)
            except httpx2.HTTPStatusError as exc:
                if exc.response.status_code != 404:
                    log.warning("deleting %s %s failed: %s", resource.__name__, name, exc)
            except httpx2.HTTPError as exc:
                log.warning("deleting %s %s failed: %s", resource.__name__, name, exc)

    async def log_tail(self, name: str, lines: int = LOG_TAIL_LINES) -> str:
        """The last `lines` lines of the pod's log ("" when there is none, e.g. never started)."""
        got: list[str] = []
        try:
            async for line in self.client.log(name, namespace=self.settings.namespace, container=CONTAINER_NAME,
                                              tail_lines=lines, newlines=False):
                got.append(line)
        except httpx2.HTTPError as exc:
            log.debug("no log of pod %s: %s", name, exc)
        return "\n".join(got[-lines:])


def _phase(pod: dict[str, Any] | None) -> str:
    """", still Pending" and the like, for a timeout's message."""
    if pod is None:
        return ""
    phase = (pod.get("status") or {}).get("phase")
    return f" (still {phase})" if phase else ""
