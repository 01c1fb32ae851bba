"""One watch of this env host's pods (label `simulusion.dev/envhost=<id>`), shared by every
instance: each pod's latest state, and a wake-up for whoever waits on it. A broken watch is
started again (after a second, with a fresh list first), so no pod is polled on its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from lightkube import AsyncClient
from lightkube.resources.core_v1 import Pod

log = logging.getLogger(__name__)

RESTART_AFTER_S = 1.0


class PodWatch:
    """The latest form of each watched pod, by name (None once deleted)."""

    def __init__(self, client: AsyncClient, namespace: str, labels: dict[str, Any]) -> None:
        self._client = client
        self._namespace = namespace
        self._labels = labels
        self._pods: dict[str, dict[str, Any] | None] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def latest(self, name: str) -> dict[str, Any] | None:
        """The pod as last seen (None: deleted, or not seen yet)."""
        return self._pods.get(name)

    def seen(self, name: str) -> bool:
        return name in self._pods

    def forget(self, name: str) -> None:
        self._pods.pop(name, None)

    async def until(self, name: str, done: Callable[[dict[str, Any] | None], bool], timeout: float | None) -> bool:
        """Wait until `done(pod)` holds for the pod `name` as last seen (None once it is deleted;
        not called before the pod is first seen); False when `timeout` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if name in self._pods and done(self._pods[name]):
                return True
            changed = self._changed
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            try:
                await asyncio.wait_for(changed.wait(), left)
            except TimeoutError:
                return False

    async def _run(self) -> None:
        while True:
            try:
                # List, then watch from the list's version: a pod deleted while no watch ran is
                # missing from the list, and its waiters learn that it is gone.
                listing = self._client.list(Pod, namespace=self._namespace, labels=self._labels)
                listed: dict[str, dict[str, Any] | None] = {
                    pod.metadata.name: pod.to_dict() async for pod in listing
                    if pod.metadata is not None and pod.metadata.name}
                self._pods = {name: listed.get(name) for name in self._pods} | listed
                self._wake()
                async for kind, pod in self._client.watch(Pod, namespace=self._namespace, labels=self._labels,
                                                          resource_version=listing.resourceVersion):
                    raw = pod.to_dict()
                    name = raw.get("metadata", {}).get("name", "")
                    self._pods[name] = None if kind == "DELETED" else raw
                    self._wake()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the API server went away: watch again
                log.warning("the watch of env pods in namespace %s broke (%s: %s); watching again in %g s",
                            self._namespace, type(exc).__name__, exc, RESTART_AFTER_S)
            await asyncio.sleep(RESTART_AFTER_S)

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
