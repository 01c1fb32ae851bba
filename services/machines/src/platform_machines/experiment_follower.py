"""Following one experiment: its SSH connection (which carries the PLATFORM_URL forward), its
start (after uploading its folder, when it has one), its log copied into the platform's
database by offset, and its end.

One task per active experiment. A dropped connection is dialled again, and the log continues
from the byte the database holds (`ExperimentStore.append_log`); a machine unreachable for
`lost_after` seconds makes the experiment `lost`. The task never stops the command: only
cancel does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import asyncssh

from platform_machines.errors import InvalidExperimentError, MachineError
from platform_machines.experiment_script import (CHECKOUT_FAILED, CLONE_FAILED, cancel_command, launch_script,
                                                 parse_poll, poll_command)
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.folder_source import FolderSource
from platform_machines.folder_upload import upload_folder
from platform_machines.machine_store import MachineStore
from platform_machines.ray_script import head_command
from platform_machines.ssh_connections import SshDialer

log = logging.getLogger(__name__)

READ_BYTES = 256 * 1024  # the most log bytes one read brings


@dataclass(frozen=True)
class FollowSettings:
    public_url: str
    gateway: tuple[str, int]  # where a forwarded port leads
    poll_interval: float
    lost_after: float
    fail_fast: float
    cancel_grace: float = 10.0  # seconds from TERM to KILL when an experiment cancelled while starting is stopped


@dataclass(frozen=True)
class Launch:
    """What starting needs once: the variables (PLATFORM_TOKEN among them, never stored), and the
    folder of the platform's host to upload as the checkout (None: the repository is cloned)."""

    env: Mapping[str, str]
    upload: FolderSource | None = None


Ended = Callable[[StoredExperiment], Awaitable[None]]


class ExperimentFollower:
    def __init__(self, experiment: StoredExperiment, store: ExperimentStore, machines: MachineStore,
                 dialer: SshDialer, settings: FollowSettings, on_end: Ended) -> None:
        self.id = experiment.id
        self.machine_name = experiment.machine_name
        self.store = store
        self.machines = machines
        self.dialer = dialer
        self.settings = settings
        self.on_end = on_end
        self.started: asyncio.Future[StoredExperiment] = asyncio.get_running_loop().create_future()
        self.ended_at_once = False  # the start saw the command end within `fail_fast`

    def _what(self) -> str:
        return f"experiment {self.id} on machine '{self.machine_name}'"

    async def run(self, launch: Launch | None) -> None:
        """Start (when `launch` is given) and follow until the experiment ended."""
        unreachable_since: float | None = None
        while True:
            experiment = await self.store.get(self.id)
            if experiment.ended_at:  # ended (a cancelled one has ended_at once its processes are gone)
                return
            try:
                machine = await self.machines.get(experiment.machine_id)
                async with self.dialer.open_machine(machine.name, machine.target, machine.host_keys) as opened:
                    unreachable_since = None
                    conn = opened.connection
                    await self._forward(conn, experiment)
                    if launch is not None:
                        await self._launch(conn, launch)
                        launch = None
                    if await self._follow(conn):
                        return
            except InvalidExperimentError as exc:  # the start itself failed: nothing runs
                if not self.started.done():
                    self.started.set_exception(exc)
                return
            except (MachineError, asyncssh.Error, OSError, asyncio.TimeoutError) as exc:
                if launch is not None:  # never started: say so to the request and forget it
                    if not self.started.done():
                        self.started.set_exception(exc if isinstance(exc, MachineError) else InvalidExperimentError(
                            f"{self._what()}: cannot start: {type(exc).__name__}: {exc}", field="machine"))
                    return
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                log.warning("%s: connection lost (%s); dialling again", self._what(), exc)
                if now - unreachable_since >= self.settings.lost_after:
                    await self._end("lost", None, f"the machine could not be reached for "
                                                  f"{self.settings.lost_after:g} s: {exc}")
                    return
                await asyncio.sleep(min(5.0, self.settings.poll_interval * 4))

    async def _forward(self, conn: asyncssh.SSHClientConnection, experiment: StoredExperiment) -> None:
        if self.settings.public_url:
            if not experiment.platform_url:
                await self.store.update(self.id, platform_url=self.settings.public_url)
            return
        host, port = self.settings.gateway
        try:
            listener = await conn.forward_remote_port("127.0.0.1", experiment.forward_port, host, port)
        except asyncssh.Error as exc:
            log.warning("%s: cannot forward port %s on the machine to the platform: %s",
                        self._what(), experiment.forward_port, exc)
            return
        if not experiment.forward_port:
            remote = listener.get_port()
            await self.store.update(self.id, forward_port=remote, platform_url=f"http://127.0.0.1:{remote}")

    async def _launch(self, conn: asyncssh.SSHClientConnection, launch: Launch) -> None:
        experiment = await self.store.get(self.id)
        # PLATFORM_EXPERIMENT_ID: a training run the command starts (platform_sdk.runs) belongs to it
        env = {**launch.env, "PLATFORM_URL": experiment.platform_url, "PLATFORM_EXPERIMENT_ID": self.id}
        log_start = "" if launch.upload is None else await self._upload(conn, launch.upload)
        # with a Ray cluster, the command runs on a Ray head started first (ray_script)
        command = head_command(experiment.ray, experiment.command) if experiment.ray else experiment.command
        script = launch_script(self.id, experiment.repository, experiment.ref, command, env,
                               self.settings.fail_fast, uploaded=launch.upload is not None, log_start=log_start)
        result = await conn.run("bash -s", input=script, check=False)
        out = str(result.stdout or "")
        lines = dict(line.split("=", 1) for line in out.splitlines() if "=" in line and line.split("=", 1)[0]
                     in ("run_dir", "pid", "exit", "since_start_ns"))
        if result.exit_status in (CLONE_FAILED, CHECKOUT_FAILED):
            said = "\n".join(line for line in out.splitlines() if not line.startswith("run_dir="))
            what = (f"the repository {experiment.repository!r} does not clone" if result.exit_status == CLONE_FAILED
                    else f"the ref {experiment.ref!r} cannot be checked out")
            raise InvalidExperimentError(f"{self._what()}: {what}: {said.strip()[-1000:]}",
                                         field="repository" if result.exit_status == CLONE_FAILED else "ref")
        if result.exit_status is None and "pid" in lines:  # the connection dropped after the start: it runs
            log.warning("%s: the connection dropped right after the start (pid %s); following it", self._what(),
                        lines["pid"])
            lines.pop("exit", None)  # a fail-fast wait cut short says nothing of the command's end
        elif result.exit_status is None:  # dropped before the start said anything: whether it runs is unknown
            await self._stop_half_started(experiment)
            raise InvalidExperimentError(
                f"{self._what()}: the connection to the machine dropped while starting; nothing was left "
                "running: try again", field="machine")
        elif result.exit_status != 0 or "pid" not in lines:
            raise InvalidExperimentError(
                f"{self._what()}: the start failed (exit {result.exit_status}): "
                f"{(str(result.stderr or '') + out).strip()[-1000:]}", field="machine")
        run_dir, now = lines.get("run_dir", ""), time.time() - _since_start(lines.get("since_start_ns", ""))
        updated = await self.store.update(self.id, if_status="starting", run_dir=run_dir, status="running",
                                          started_at=now)
        if updated.status != "running":  # cancelled while it was starting: what just started is stopped
            log.info("%s: cancelled while starting; stopping what started", self._what())
            updated = await self.store.update(self.id, run_dir=run_dir, started_at=now)
            await conn.run("bash -s", input=cancel_command(self.id, self.settings.cancel_grace), check=False)
        self.ended_at_once = "exit" in lines
        self.started.set_result(updated)

    async def _stop_half_started(self, experiment: StoredExperiment) -> None:
        """After a start cut off before it said its pid: stop whatever of it runs, and its run folder
        goes (on a new connection; best effort: a machine that stays unreachable keeps nothing that
        the platform follows, and the start's 422 says to try again)."""
        try:
            machine = await self.machines.get(experiment.machine_id)
            async with self.dialer.open_machine(machine.name, machine.target, machine.host_keys) as opened:
                await opened.connection.run("bash -s", input=cancel_command(self.id, 0.0, remove=True), check=False)
        except (MachineError, asyncssh.Error, OSError, asyncio.TimeoutError) as exc:
            log.warning("%s: could not clean up a start cut off: %s", self._what(), exc)

    async def _upload(self, conn: asyncssh.SSHClientConnection, source: FolderSource) -> str:
        """The folder into the run folder's checkout/; its progress lines kept as the log's first
        bytes, returned for the launch to write at the start of the log file."""
        said: list[str] = []

        async def progress(line: str) -> None:
            offset = len("".join(said).encode())
            await self.store.append_log(self.id, offset, line.encode())
            said.append(line)

        await upload_folder(conn, self.id, source, progress)
        return "".join(said)

    async def _follow(self, conn: asyncssh.SSHClientConnection) -> bool:
        """Copy the log until the experiment ends (True) or the connection drops (raises)."""
        while True:
            experiment = await self.store.get(self.id)
            offset = experiment.log_bytes
            result = await conn.run(poll_command(self.id, offset, READ_BYTES), encoding=None, check=False)
            if result.exit_status is None:  # the channel closed before the read ended: what came is partial
                raise asyncssh.ConnectionLost("the connection dropped during a log read")
            out = result.stdout or b""
            polled = parse_poll(out if isinstance(out, bytes) else out.encode())
            if polled.data:
                await self.store.append_log(self.id, offset, polled.data)
            if len(polled.data) >= READ_BYTES:
                continue  # more is waiting
            if polled.state == "exit":
                code = polled.exit_code
                await self._end("succeeded" if code == 0 else "failed", code,
                                "" if code == 0 else f"the command exited with {code}")
                return True
            if polled.state == "dead":
                await self._end("failed", None, "the command's processes are gone without an exit code "
                                                "(killed, or the machine restarted)")
                return True
            if polled.state == "gone":
                await self._end("lost", None, "its run folder is gone from the machine")
                return True
            await asyncio.sleep(self.settings.poll_interval)

    async def _end(self, status: str, code: int | None, reason: str) -> None:
        current = await self.store.get(self.id)
        values: dict[str, Any] = {"ended_at": current.ended_at or time.time()}
        if current.status == "cancelled":
            values["exit_code"] = code
            ended = await self.store.update(self.id, **values)
        else:
            ended = await self.store.update(self.id, status=status, exit_code=code, status_reason=reason, **values)
        log.info("%s ended: %s%s", self._what(), ended.status, "" if code is None else f" (exit {code})")
        await self.on_end(ended)


def _since_start(nanoseconds: str) -> float:
    """Seconds between the command's start and the launch's answer (the fail-fast wait), as the
    machine measured them; 0 when it could not (then started_at is when the answer came)."""
    try:
        return min(max(int(nanoseconds) / 1e9, 0.0), 60.0)
    except ValueError:
        return 0.0
