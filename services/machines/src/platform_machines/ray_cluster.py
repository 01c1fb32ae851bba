"""The Ray workers of an experiment (docs/training.md, "Distributed training"): checked on
create, started on their machines once the head's experiment has started, kept (one task per
worker, holding its SSH connection and, without a public URL, its PLATFORM_URL forward) and
stopped when the experiment ends, is cancelled or fails: also after the service restarted
(`resume`), since the experiment's row keeps them (`ray` column).

A worker runs like an experiment (`experiment_script.launch_script`): the same repository and
ref cloned (or the same folder uploaded) into its own run folder `<id>-worker-<n>`, detached with
`setsid nohup` in its own process group, which `cancel_command` stops (TERM, then KILL). Its
variables are the experiment's (PLATFORM_TOKEN among them) with its own PLATFORM_URL. The
platform assigns none of a worker machine's GPUs: Ray sees all it has. Its log stays in its run
folder; a failed worker's state says the log's end.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import asyncssh

from platform_machines.errors import InvalidExperimentError, MachineError, MachineNotFoundError
from platform_machines.experiment_follower import FollowSettings
from platform_machines.experiment_script import cancel_command, launch_script
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.folder_source import FolderSource
from platform_machines.folder_upload import upload_folder
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.ray_script import worker_command, worker_poll_command
from platform_machines.ray_spec import RaySpec, RayWorker, checked_spec, worker_run_id
from platform_machines.ssh_connections import SshDialer

log = logging.getLogger(__name__)

READY = "ready"
ENDED_GRACE_POLLS = 10  # a worker that exits on its own this soon before the experiment's end just stopped

Stop = Callable[[str, str], Awaitable[None]]  # (experiment id, reason): cancel the experiment


def worker_variables(head: Mapping[str, str]) -> dict[str, str]:
    """A worker's variables: the head's less its CUDA_VISIBLE_DEVICES (the head machine's GPUs:
    a worker's own are not assigned, Ray there sees all its machine has)."""
    return {name: value for name, value in head.items() if name != "CUDA_VISIBLE_DEVICES"}


class RayWorkers:
    def __init__(self, store: ExperimentStore, machines: MachineStore, dialer: SshDialer,
                 settings: FollowSettings, stop_experiment: Stop | None = None) -> None:
        self.store = store
        self.stop_experiment = stop_experiment  # a worker that fails before it joined stops its experiment
        self.machines = machines
        self.dialer = dialer
        self.settings = settings
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._kept: set[str] = set()  # experiments whose workers have keepers (in this process)

    async def check(self, team: str, head: StoredMachine, spec: RaySpec) -> RaySpec:
        """The settings with defaults and the workers' names; a 422 (field `ray.workers`) for a
        machine unknown (or another team's), the head itself, a repeat, or one not ready."""
        spec = checked_spec(spec)
        seen: set[str] = set()
        workers = []
        for worker in spec.workers:
            if worker.machine_id in seen:
                raise InvalidExperimentError(f"ray.workers: machine '{worker.machine_id}' is listed twice",
                                             field="ray.workers")
            seen.add(worker.machine_id)
            if worker.machine_id == head.id:
                raise InvalidExperimentError(f"ray.workers: machine '{head.name}' ({head.id}) runs the head (the "
                                             "experiment's machine): list only the other machines",
                                             field="ray.workers")
            try:
                machine = await self.machines.get(worker.machine_id)
            except MachineNotFoundError:
                machine = None
            if machine is None or machine.team != team:
                raise InvalidExperimentError(f"ray.workers: machine '{worker.machine_id}' not found",
                                             field="ray.workers")
            if machine.status != READY:
                raise InvalidExperimentError(
                    f"ray.workers: machine '{machine.name}' ({machine.id}) is {machine.status}, not ready"
                    f"{': ' + machine.status_reason if machine.status_reason else ''}", field="ray.workers")
            workers.append(RayWorker(machine_id=machine.id, machine_name=machine.name))
        head_address = spec.head_address
        if not head_address:
            if head.target.tunnel or head.target.jumps:
                raise InvalidExperimentError(
                    f"ray.head_address: machine '{head.name}' is reached through a tunnel or bastions: give the "
                    "address its workers reach it at", field="ray.head_address")
            head_address = head.target.machine.host
        return replace(spec, workers=tuple(workers), head_address=head_address)

    def start(self, experiment: StoredExperiment, variables: Mapping[str, str], upload: FolderSource | None) -> None:
        """Launch and keep every worker of an experiment whose head just started."""
        assert experiment.ray is not None
        for n in range(len(experiment.ray.workers)):
            self._spawn(experiment.id, n, worker_variables(variables), upload)

    async def resume(self) -> None:
        """Keep again the workers not stopped yet (after the service restarted): those of an
        ended experiment are stopped."""
        for experiment in await self.store.list():
            for n, worker in enumerate(experiment.ray.workers if experiment.ray else ()):
                if not worker.final:
                    self._spawn(experiment.id, n, None, None)

    async def never_started(self, experiment_id: str, reason: str) -> None:
        """The experiment ended before its workers were launched."""
        experiment = await self.store.get(experiment_id)
        for n, worker in enumerate(experiment.ray.workers if experiment.ray else ()):
            if not worker.final:
                await self._set(experiment_id, n, state="stopped", reason=f"not started: {reason}")

    async def never_started_if_unlaunched(self, experiment_id: str, reason: str) -> None:
        """The experiment ended: its workers that no keeper launched are marked stopped."""
        if experiment_id not in self._kept:
            await self.never_started(experiment_id, reason)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, experiment_id: str, n: int, variables: dict[str, str] | None,
               upload: FolderSource | None) -> None:
        self._kept.add(experiment_id)
        task = asyncio.create_task(self._guarded(experiment_id, n, variables, upload),
                                   name=f"ray worker {n + 1} of {experiment_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, experiment_id: str, n: int, variables: dict[str, str] | None,
                       upload: FolderSource | None) -> None:
        try:
            await self._keep(experiment_id, n, variables, upload)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: said, and the worker's state says it
            log.exception("experiment %s: keeping Ray worker %d failed", experiment_id, n + 1)
            await self._set(experiment_id, n, state="failed", reason=f"the platform failed: {exc}")

    async def _worker(self, experiment_id: str, n: int) -> tuple[StoredExperiment, RayWorker]:
        experiment = await self.store.get(experiment_id)
        assert experiment.ray is not None
        return experiment, experiment.ray.workers[n]

    async def _failed(self, experiment_id: str, n: int, reason: str) -> None:
        """The worker failed: before it joined, the head would wait for it in vain, so the
        experiment is cancelled saying why; after, Ray goes on without the node."""
        before = (await self._worker(experiment_id, n))[1]
        worker = await self._set(experiment_id, n, state="failed", reason=reason)
        experiment = await self.store.get(experiment_id)
        if before.state == "starting" and not experiment.ended and self.stop_experiment is not None:
            await self.stop_experiment(experiment_id, f"Ray worker {n + 1} on machine '{worker.machine_name}' "
                                                      f"failed before it joined the head: {reason}")

    async def _set(self, experiment_id: str, n: int, **values: Any) -> RayWorker:
        """One worker's state changed (the others' are kept: one change at a time per experiment)."""
        lock = self._locks.setdefault(experiment_id, asyncio.Lock())
        async with lock:
            experiment = await self.store.get(experiment_id)
            assert experiment.ray is not None
            spec = experiment.ray.with_worker(n, **values)
            await self.store.update(experiment_id, ray=spec.to_json())
        worker = spec.workers[n]
        if "state" in values:
            log.info("experiment %s: Ray worker %d on machine '%s' %s%s", experiment_id, n + 1, worker.machine_name,
                     worker.state, f" ({worker.reason})" if worker.reason else "")
        return worker

    async def _keep(self, experiment_id: str, n: int, variables: dict[str, str] | None,
                    upload: FolderSource | None) -> None:
        unreachable_since: float | None = None
        while True:
            experiment, worker = await self._worker(experiment_id, n)
            if worker.final:
                return
            try:
                machine = await self.machines.get(worker.machine_id)
                async with self.dialer.open_machine(machine.name, machine.target, machine.host_keys) as opened:
                    unreachable_since = None
                    conn = opened.connection
                    url = await self._forward(conn, experiment_id, n)
                    if variables is not None:
                        if experiment.ended:
                            await self._set(experiment_id, n, state="stopped", reason="not started: the "
                                            "experiment ended first")
                            return
                        await self._launch(conn, experiment, n, {**variables, "PLATFORM_URL": url}, upload)
                        variables = None
                    await self._watch(conn, experiment_id, n)
                    return
            except MachineNotFoundError:
                await self._failed(experiment_id, n, "its machine was removed")
                return
            except InvalidExperimentError as exc:
                await self._failed(experiment_id, n, str(exc))
                return
            except (MachineError, asyncssh.Error, OSError, asyncio.TimeoutError) as exc:
                if variables is not None:
                    await self._failed(experiment_id, n, f"cannot start: {exc}")
                    return
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                log.warning("experiment %s: Ray worker %d: connection lost (%s); dialling again", experiment_id,
                            n + 1, exc)
                if now - unreachable_since >= self.settings.lost_after:
                    await self._failed(experiment_id, n, (
                        f"its machine could not be reached for {self.settings.lost_after:g} s ({exc}): its "
                        "processes may still run there"))
                    return
                await asyncio.sleep(min(5.0, self.settings.poll_interval * 4))

    async def _forward(self, conn: asyncssh.SSHClientConnection, experiment_id: str, n: int) -> str:
        """PLATFORM_URL as the worker sees it: the public URL, or a port of its machine forwarded
        to the platform over this connection (the same port again after a reconnect)."""
        if self.settings.public_url:
            return self.settings.public_url
        _, worker = await self._worker(experiment_id, n)
        host, port = self.settings.gateway
        listener = await conn.forward_remote_port("127.0.0.1", worker.forward_port, host, port)
        if not worker.forward_port:
            await self._set(experiment_id, n, forward_port=listener.get_port())
        return f"http://127.0.0.1:{worker.forward_port or listener.get_port()}"

    async def _launch(self, conn: asyncssh.SSHClientConnection, experiment: StoredExperiment, n: int,
                      variables: dict[str, str], upload: FolderSource | None) -> None:
        assert experiment.ray is not None
        run_id = worker_run_id(experiment.id, n)
        if upload is not None:
            async def quiet(_line: str) -> None:
                return None
            await upload_folder(conn, run_id, upload, quiet)
        command = worker_command(experiment.ray, experiment.ray.head_address)
        script = launch_script(run_id, experiment.repository, experiment.ref, command,
                               {**variables, "PLATFORM_EXPERIMENT_ID": experiment.id}, 0.0,
                               uploaded=upload is not None)
        result = await conn.run("bash -s", input=script, check=False)
        out = str(result.stdout or "")
        lines = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        if result.exit_status != 0 or "pid" not in lines:
            said = (str(result.stderr or "") + out).strip()[-1000:]
            raise InvalidExperimentError(f"cannot start (exit {result.exit_status}): {said}", field="ray.workers")
        await self._set(experiment.id, n, run_dir=lines.get("run_dir", ""))

    async def _watch(self, conn: asyncssh.SSHClientConnection, experiment_id: str, n: int) -> None:
        """Its state until the experiment ends (then it is stopped) or it ends on its own."""
        run_id = worker_run_id(experiment_id, n)
        while True:
            experiment, worker = await self._worker(experiment_id, n)
            if experiment.ended or experiment.ended_at:
                await conn.run("bash -s", input=cancel_command(run_id, self.settings.cancel_grace), check=False)
                await self._set(experiment_id, n, state="stopped", reason=f"the experiment {experiment.status}")
                return
            result = await conn.run("bash -s", input=worker_poll_command(run_id), check=False)
            if result.exit_status is None:
                raise asyncssh.ConnectionLost("the connection dropped during a poll")
            state, _, tail = str(result.stdout or "").partition("\n")
            state = state.strip()
            if state == "running" and worker.state != "running":
                await self._set(experiment_id, n, state="running", reason="")
            elif state not in ("running", "starting"):
                await self._ended_alone(conn, experiment_id, n, state, tail)
                return
            await asyncio.sleep(self.settings.poll_interval)

    async def _ended_alone(self, conn: asyncssh.SSHClientConnection, experiment_id: str, n: int, state: str,
                           tail: str) -> None:
        """It ended by itself: `stopped` when the experiment ends soon after (its head stopped
        first), else `failed` with its log's end."""
        for _ in range(ENDED_GRACE_POLLS):
            experiment = await self.store.get(experiment_id)
            if experiment.ended or experiment.ended_at:
                await self._set(experiment_id, n, state="stopped", reason=f"the experiment {experiment.status}")
                return
            await asyncio.sleep(self.settings.poll_interval)
        await conn.run("bash -s", input=cancel_command(worker_run_id(experiment_id, n), 0.0), check=False)
        what = {"dead": "its processes are gone", "gone": "its run folder is gone"}.get(state, f"it exited ({state})")
        await self._failed(experiment_id, n, f"{what} while the experiment ran: {tail.strip()[-600:] or 'no output'}")
