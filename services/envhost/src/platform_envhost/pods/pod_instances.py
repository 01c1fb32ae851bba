"""A running env pod as the env host's `InstanceProcess`: its gRPC address, its ending (from the
watch), its log tail (read from the API once it ends) and its stop (the pod deleted)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from platform_sdk.launch.instance_processes import InstanceProcess

if TYPE_CHECKING:
    from platform_envhost.pods.pod_launcher import PodLauncher

# The exit code `wait` gives for a pod that ended without one (deleted, evicted, unschedulable).
NO_EXIT_CODE = -1


class PodInstance(InstanceProcess):
    """An instance in the pod `name`, spoken to over gRPC at `address` (`<pod IP>:<port>`).

    Built by `PodLauncher.launch` once the pod serves; it holds no local process, so the base's
    process handling is replaced whole (`pid` is 0, `log_path` names no file).

    Attributes:
        name: the pod's (and its Secret's) name.
        failure: how it ended, in words ("pod ... was OOM-killed ..."); "" while it runs.
    """

    def __init__(self, launcher: PodLauncher, name: str, address: str, log_path: Path) -> None:
        # The base's attributes, set here: there is no local process to give it.
        self.address = address
        self.transport = "grpc"
        self.pid = 0
        self.log_path = log_path
        self.name = name
        self.failure = ""
        self._launcher = launcher
        self._exit_code: int | None = None
        self._ended = False
        self._log_tail = ""

    def alive(self) -> bool:
        return not self._ended

    @property
    def returncode(self) -> int | None:
        return (NO_EXIT_CODE if self._exit_code is None else self._exit_code) if self._ended else None

    def how_it_ended(self) -> str:
        return self.failure

    def log_tail(self, lines: int = 40) -> str:
        """The pod's last log lines, as read when it ended ("" while it runs)."""
        return "\n".join(self._log_tail.splitlines()[-lines:])

    async def wait(self) -> int:
        """Wait for the pod to end (fail, exit, be deleted); returns its exit code (-1: none)."""
        state = await self._launcher.until_ended(self.name)
        if not self._ended:
            self._log_tail = await self._launcher.log_tail(self.name)
            self.failure, self._exit_code, self._ended = state.failure, state.exit_code, True
        return NO_EXIT_CODE if self._exit_code is None else self._exit_code

    async def stop(self, timeout: float = 5.0) -> None:
        """Delete the pod and its Secret; idempotent."""
        if not self._ended:
            self._ended = True
            self.failure = self.failure or f"pod {self.name} was deleted by its env host"
        await self._launcher.delete(self.name, grace_s=timeout)

    def __repr__(self) -> str:
        return f"PodInstance(name={self.name!r}, address={self.address!r}, alive={self.alive()})"
