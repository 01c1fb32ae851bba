"""A Kubernetes API to test the env host's pod launcher against, with a kubelet that runs pods as
local processes (`kubernetes_cluster`; the `kubernetes` extra).

The API is kmock's emulator (`kmock.KubernetesEmulator`: the real REST paths over HTTP, objects
kept in memory, lists and watches) with what the launcher needs and it lacks filled in by
`PodApiEmulator`:

- `metadata.uid`, `creationTimestamp` and a `resourceVersion` that every write advances (kmock
  stores objects as given);
- optimistic concurrency: a PATCH naming a `metadata.resourceVersion` other than the object's
  is answered 409 Conflict, as the API server does (kmock applies every patch);
- `labelSelector` on lists and watches (kmock answers every object of the resource);
- the pod log subresource (`GET .../pods/<name>/log?tailLines=N`), read from the kubelet's files.

`TestKubelet` watches pods through that API (as a kubelet watches the API server) and plays
one node: a pod asking for `nvidia.com/gpu` (the node has none) or a node selector the node
lacks is Unschedulable; an image other than the known ones fails with ErrImagePull, then
ImagePullBackOff; any other pod's command runs as a local process once its Secret volumes exist,
with `python` read as this interpreter, `--listen 0.0.0.0:<port>` as a free loopback port, and
each Secret volume's mount path as a local folder holding its files (in the arguments and in the
files' own text: the stand-in for a mount namespace). The pod's status then says Running, podIP
127.0.0.1, Ready once the port accepts connections, and `terminated` (exit code, `OOMKilled` after
`oom_kill`) when the process ends; its annotation `simulusion.dev/instance-port` names the port,
since every pod here shares one IP. Deleting a pod stops its process, and the pods and Secrets it
owns are deleted (the garbage collector's part).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import itertools
import json
import os
import shutil
import signal
import socket
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.test_utils
import aiohttp.web_runner
import aiohttp.web_server
import attrs
import kmock
import pytest
from kmock._internal.k8s import KubernetesError

from platform_testing.ports import free_port

INSTANCE_PORT_ANNOTATION = "simulusion.dev/instance-port"
KNOWN_IMAGE = "simulusion-platform-envs:test"
NODE_NAME = "test-node"
READY_POLL_S = 0.05


@attrs.frozen
class ConflictError(KubernetesError):
    """409 Conflict: a write named a resourceVersion the object no longer has."""

    status: int = 409
    reason: str = "Conflict"
    message: str = "the object has been modified; please apply your changes to the latest version and try again"


def _matches(labels: dict[str, str], selector: str) -> bool:
    """Whether `labels` satisfy a label selector of `k=v`, `k==v`, `k!=v`, `k` and `!k` terms."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _labels(obj: Any) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


@attrs.define(kw_only=True)
class PodApiEmulator(kmock.KubernetesEmulator):
    """kmock's emulator with resource versions, conflicts, label selectors and pod logs."""

    log_folder: Path | None = None
    _versions: Iterator[int] = attrs.field(factory=lambda: itertools.count(1000), init=False)
    _write_lock: asyncio.Lock = attrs.field(factory=asyncio.Lock, init=False)

    async def _handle(self, request: kmock.Request) -> Any:
        if request.action not in (kmock.action.CREATE, kmock.action.UPDATE) or not isinstance(request.data, dict):
            return await super()._handle(request)
        async with self._write_lock:
            metadata = request.data.setdefault("metadata", {})
            if request.action == kmock.action.CREATE:
                metadata.setdefault("uid", str(uuid.uuid4()))
                metadata.setdefault("creationTimestamp", datetime.datetime.now(datetime.UTC).isoformat())
                if request.resource is not None and request.resource.plural == "pods":
                    request.data.setdefault("status", {"phase": "Pending"})
            else:
                current = self._current(request)
                asked = metadata.get("resourceVersion")
                if current is not None and asked and asked != current.get("metadata", {}).get("resourceVersion"):
                    raise ConflictError()
            metadata["resourceVersion"] = str(next(self._versions))
            return await super()._handle(request)

    def _current(self, request: kmock.Request) -> dict[str, Any] | None:
        for (resource, namespace, name), obj in self.objects.items():
            if resource == request.resource and namespace == request.namespace and name == request.name:
                return None if obj.deleted else dict(obj.raw)
        return None

    async def _serve_list(self, request: kmock.Request) -> Any:
        listing: dict[str, Any] = await super()._serve_list(request)  # type: ignore[assignment]
        selector = request.params.get("labelSelector", "")
        listing["items"] = [item for item in listing["items"] if _matches(_labels(item), selector)]
        listing["metadata"] = {"resourceVersion": str(next(self._versions))}
        return listing

    async def _serve_watch(self, request: kmock.Request) -> AsyncIterator[Any]:
        selector = request.params.get("labelSelector", "")
        async for event in super()._serve_watch(request):
            if not isinstance(event, dict) or _matches(_labels(event.get("object")), selector):
                yield event

    async def _serve_fetch(self, request: kmock.Request) -> Any:
        if request.subresource != "log":
            return await super()._serve_fetch(request)
        path = (self.log_folder or Path("/nonexistent")) / f"{request.name}.log"
        try:
            text = path.read_text(errors="replace")
        except OSError:
            raise kmock.KubernetesObjectNotFoundError() from None
        lines = text.splitlines()
        tail = int(request.params.get("tailLines") or len(lines) or 1)
        return ("\n".join(lines[-tail:]) + "\n").encode() if lines else b""


@dataclass
class _RunningPod:
    process: asyncio.subprocess.Process
    port: int
    folder: Path
    oom: bool = False


@dataclass
class TestKubelet:
    """One node that runs the emulator's pods as local processes (see the module's docstring)."""

    __test__ = False  # not a pytest class

    api: PodApiEmulator
    folder: Path
    known_images: set[str] = field(default_factory=lambda: {KNOWN_IMAGE})
    node_labels: dict[str, str] = field(default_factory=lambda: {"kubernetes.io/hostname": NODE_NAME})
    _running: dict[str, _RunningPod] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _processes: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def run(self) -> None:
        """Watch every pod and act on each (until cancelled)."""
        while True:
            try:
                async with self.api.get("/api/v1/pods", params={"watch": "true"},
                                        timeout=aiohttp.ClientTimeout(total=None)) as response:
                    async for line in response.content:
                        if line.strip():
                            self._on_event(json.loads(line))
            except (aiohttp.ClientError, json.JSONDecodeError):
                await asyncio.sleep(0.2)

    def _on_event(self, event: dict[str, Any]) -> None:
        pod = event.get("object") or {}
        metadata = pod.get("metadata") or {}
        key = f"{metadata.get('namespace')}/{metadata.get('name')}"
        if event.get("type") == "DELETED":
            self._spawn(self._deleted(pod))
        elif key not in self._seen and event.get("type") == "ADDED":
            self._seen.add(key)
            self._spawn(self._admit(pod))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _patch_status(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        metadata = pod["metadata"]
        async with self.api.patch(f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}/status",
                                  json={"status": status},
                                  headers={"Content-Type": "application/merge-patch+json"}) as response:
            if response.status != 404:  # 404: deleted meanwhile, nothing to report
                response.raise_for_status()

    async def _admit(self, pod: dict[str, Any]) -> None:
        spec = pod.get("spec") or {}
        container = spec["containers"][0]
        limits = (container.get("resources") or {}).get("limits") or {}
        selector = spec.get("nodeSelector") or {}
        missing = {k: v for k, v in selector.items() if self.node_labels.get(k) != v}
        if "nvidia.com/gpu" in limits or missing:
            why = "1 Insufficient nvidia.com/gpu" if "nvidia.com/gpu" in limits else \
                "1 node(s) didn't match Pod's node affinity/selector"
            await self._patch_status(pod, {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": f"0/1 nodes are available: {why}."}]})
            return
        scheduled = {"type": "PodScheduled", "status": "True"}
        image = container.get("image", "")
        if image not in self.known_images:
            for reason in ("ErrImagePull", "ImagePullBackOff"):
                await self._patch_status(pod, {"phase": "Pending", "conditions": [scheduled], "containerStatuses": [
                    {"name": container["name"], "image": image, "imageID": "", "restartCount": 0, "ready": False,
                     "state": {"waiting": {
                        "reason": reason, "message": f'failed to pull image "{image}": not found'}}}]})
                await asyncio.sleep(0.2)
            return
        await self._start(pod, container, scheduled)

    async def _secret_files(self, pod: dict[str, Any], folder: Path) -> dict[str, Path]:
        """Write each Secret volume's files to a local folder (waiting for the Secret, as a
        kubelet's mount does); returns the local folder of each mount path."""
        namespace = pod["metadata"]["namespace"]
        volumes = {v["name"]: v["secret"]["secretName"] for v in pod["spec"].get("volumes") or [] if "secret" in v}
        mounts: dict[str, Path] = {}
        for mount in pod["spec"]["containers"][0].get("volumeMounts") or []:
            secret_name = volumes.get(mount["name"])
            if secret_name is None:
                continue
            while True:
                async with self.api.get(f"/api/v1/namespaces/{namespace}/secrets/{secret_name}") as response:
                    if response.status == 200:
                        secret = await response.json()
                        break
                await asyncio.sleep(READY_POLL_S)
            local = folder / mount["name"]
            local.mkdir(parents=True, exist_ok=True)
            for key, value in (secret.get("data") or {}).items():
                (local / key).write_bytes(base64.b64decode(value))
            mounts[mount["mountPath"]] = local
        for local in mounts.values():  # the files name other files by their path in the pod
            for path in local.iterdir():
                with contextlib.suppress(UnicodeDecodeError):
                    text = path.read_text()
                    for mount_path, other in mounts.items():
                        text = text.replace(mount_path, str(other))
                    path.write_text(text)
        return mounts

    async def _start(self, pod: dict[str, Any], container: dict[str, Any], scheduled: dict[str, Any]) -> None:
        name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        mounts = await self._secret_files(pod, folder)
        port = free_port()
        argv = [*container.get("command", []), *container.get("args", [])]
        if argv and argv[0] == "python":
            argv[0] = sys.executable
        for index, arg in enumerate(argv):
            if index and argv[index - 1] == "--listen":
                argv[index] = f"127.0.0.1:{port}"
            for mount_path, local in mounts.items():
                argv[index] = argv[index].replace(mount_path, str(local))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PLATFORM_", "NATS_"))}
        env.update({e["name"]: e.get("value", "") for e in container.get("env") or []})
        with open(self.folder / f"{name}.log", "wb") as log:  # noqa: ASYNC230 - a local file
            try:
                process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL, stdout=log,
                                                               stderr=log, env=env, cwd=folder, start_new_session=True)
            except OSError as exc:  # no such command: the container cannot start
                await self._patch_status(pod, {"phase": "Pending", "conditions": [scheduled], "containerStatuses": [
                    {"name": container["name"], "image": container["image"], "imageID": "", "restartCount": 0,
                     "ready": False, "state": {"waiting": {"reason": "RunContainerError", "message": str(exc)}}}]})
                return
        self._processes.append(process)
        running = self._running[f"{namespace}/{name}"] = _RunningPod(process, port, folder)
        async with self.api.patch(f"/api/v1/namespaces/{namespace}/pods/{name}",
                                  json={"metadata": {"annotations": {INSTANCE_PORT_ANNOTATION: str(port)}}},
                                  headers={"Content-Type": "application/merge-patch+json"}) as response:
            response.raise_for_status()
        state = {"name": container["name"], "image": container["image"], "imageID": f"test://{container['image']}",
                 "restartCount": 0, "ready": False,
                 "state": {"running": {"startedAt": datetime.datetime.now(datetime.UTC).isoformat()}}}
        base = {"phase": "Running", "podIP": "127.0.0.1", "hostIP": "127.0.0.1"}
        await self._patch_status(pod, base | {"conditions": [scheduled, {"type": "Ready", "status": "False"}],
                                              "containerStatuses": [state]})
        while process.returncode is None:
            if await _accepts(port):
                await self._patch_status(pod, base | {"conditions": [scheduled, {"type": "Ready", "status": "True"}],
                                                      "containerStatuses": [state | {"ready": True}]})
                break
            await asyncio.sleep(READY_POLL_S)
        code = await process.wait()
        if self._running.get(f"{namespace}/{name}") is not running:
            return  # deleted
        oom = running.oom
        code = 137 if oom else (128 - code if code < 0 else code)
        reason = "OOMKilled" if oom else ("Completed" if code == 0 else "Error")
        await self._patch_status(pod, {"phase": "Succeeded" if code == 0 else "Failed",
                                       "conditions": [scheduled, {"type": "Ready", "status": "False"}],
                                       "containerStatuses": [state | {"state": {"terminated": {
                                           "exitCode": code, "reason": reason}}}]})

    async def _deleted(self, pod: dict[str, Any]) -> None:
        metadata = pod.get("metadata") or {}
        running = self._running.pop(f"{metadata.get('namespace')}/{metadata.get('name')}", None)
        if running is not None and running.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                running.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(running.process.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    running.process.kill()
                await running.process.wait()
        uid = metadata.get("uid")
        for (resource, namespace, name), obj in list(self.api.objects.items()):  # the garbage collector
            if resource.plural not in ("pods", "secrets") or obj.deleted or namespace != metadata.get("namespace"):
                continue
            owners = (obj.get("metadata") or {}).get("ownerReferences") or []
            if any(owner.get("uid") == uid for owner in owners):
                async with self.api.delete(f"/api/v1/namespaces/{namespace}/{resource.plural}/{name}"):
                    pass

    def oom_kill(self, namespace: str, name: str) -> None:
        """Kill the pod's process as the kernel's OOM killer does (SIGKILL); its status then
        says OOMKilled, exit code 137."""
        running = self._running[f"{namespace}/{name}"]
        running.oom = True
        running.process.kill()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for process in self._processes:  # deleted pods' too, in case their deletion was cut short
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self._running.clear()


async def _accepts(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


# How long the API server waits, when it stops, for requests still open (the env hosts' pod
# watches never end by themselves) before it cuts them: aiohttp's default is 60 s.
API_SHUTDOWN_S = 0.5


class _QuickStopServer(aiohttp.test_utils.RawTestServer):
    """kmock's HTTP server, cutting open watches after API_SHUTDOWN_S when it stops."""

    async def _make_runner(self, debug: bool = True, **kwargs: Any) -> aiohttp.web_runner.ServerRunner:
        server = aiohttp.web_server.Server(self._handler, loop=self._loop, debug=debug, **kwargs)
        return aiohttp.web_runner.ServerRunner(server, debug=debug, shutdown_timeout=API_SHUTDOWN_S, **kwargs)


class KubernetesCluster:
    """The emulator and its kubelet, served from a thread of their own (so that a test's
    blocking calls and the platform's processes both reach them).

    Attributes:
        url: the API server's URL (PLATFORM_KUBE_API_URL).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kubernetes-emulator", daemon=True)
        self._stopped: asyncio.Event | None = None
        self.api: PodApiEmulator | None = None
        self.kubelet: TestKubelet | None = None

    def start(self) -> KubernetesCluster:
        self._thread.start()
        ready: Future[str] = Future()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(ready), self._loop)
        self.url = ready.result(timeout=30)
        return self

    async def _serve(self, ready: Future[str]) -> None:
        self._stopped = asyncio.Event()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.api = PodApiEmulator(log_folder=self.folder)
        self.api.resources["v1/pods"] = kmock.ResourceInfo(kind="Pod", singular="pod", namespaced=True,
                                                           subresources={"status", "log"})
        self.api.resources["v1/secrets"] = kmock.ResourceInfo(kind="Secret", singular="secret", namespaced=True)
        async with self.api, kmock.Server(self.api, server_cls=_QuickStopServer) as server:
            self.kubelet = TestKubelet(self.api, self.folder)
            kubelet = asyncio.create_task(self.kubelet.run())
            ready.set_result(str(server.url).rstrip("/"))
            await self._stopped.wait()
            kubelet.cancel()
            await self.kubelet.stop()

    def call(self, coro: Any, timeout: float = 30.0) -> Any:
        """Run a coroutine in the cluster's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def pods(self, namespace: str | None = None, selector: str = "") -> list[dict[str, Any]]:
        """The pods that exist now (optionally of one namespace, matching a label selector)."""
        assert self.api is not None
        api = self.api

        async def read() -> list[dict[str, Any]]:
            return [dict(obj.raw) for (resource, ns, _), obj in api.objects.items()
                    if resource.plural == "pods" and not obj.deleted and namespace in (None, ns)
                    and _matches(_labels(obj.raw), selector)]
        result: list[dict[str, Any]] = self.call(read())
        return result

    def secrets(self, namespace: str | None = None) -> list[dict[str, Any]]:
        assert self.api is not None
        api = self.api

        async def read() -> list[dict[str, Any]]:
            return [dict(obj.raw) for (resource, ns, _), obj in api.objects.items()
                    if resource.plural == "secrets" and not obj.deleted and namespace in (None, ns)]
        result: list[dict[str, Any]] = self.call(read())
        return result

    def oom_kill(self, namespace: str, name: str) -> None:
        assert self.kubelet is not None
        kubelet = self.kubelet

        async def kill() -> None:
            kubelet.oom_kill(namespace, name)
        self.call(kill())

    def stop(self) -> None:
        """Stop the kubelet's processes and the API server, end every task of the loop."""
        if self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
            with contextlib.suppress(Exception):
                self._main.result(timeout=30)

        async def end_the_rest() -> None:
            rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            await self._loop.shutdown_asyncgens()
        with contextlib.suppress(Exception):
            self.call(end_the_rest())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def kubernetes_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubernetesCluster]:
    """A Kubernetes API emulator with a test kubelet (see the module's docstring); its `url` is
    what PLATFORM_KUBE_API_URL names."""
    cluster = KubernetesCluster(tmp_path_factory.mktemp("kube")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def socket_free(port: int) -> bool:
    """Whether nothing listens on the loopback `port` (a deleted pod's process is gone)."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0
