"""Experiments on the machines: create (check the request, assign GPUs, start), cancel, list,
read the log, and follow every active one across the service's restarts.

GPUs: a machine's GPUs (its last check's `facts.gpus`) held by its starting or running
experiments are taken; the rest are free. A request for more GPUs than the machine has is a
422; for more than are free now, a 409 naming the experiments that hold them (nothing is
queued). `gpus: 0` sees no GPU (`CUDA_VISIBLE_DEVICES=`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

import asyncssh

from platform_machines.errors import ExperimentUnavailableError, GpusBusyError, InvalidExperimentError, MachineError
from platform_machines.experiment_follower import ExperimentFollower, FollowSettings, Launch
from platform_machines.experiment_script import ENV_NAME, cancel_command
from platform_machines.experiment_store import ACTIVE, ExperimentStore, StoredExperiment, new_experiment_id
from platform_machines.folder_source import UploadPolicy
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.ssh_connections import SshDialer

log = logging.getLogger(__name__)

RESERVED_ENV = ("CUDA_VISIBLE_DEVICES", "PLATFORM_URL", "PLATFORM_TOKEN")
MAX_ENV = 200


class Experiments:
    def __init__(self, store: ExperimentStore, machines: MachineStore, dialer: SshDialer, settings: FollowSettings,
                 cancel_grace: float, on_end: Callable[[StoredExperiment], Awaitable[None]],
                 uploads: UploadPolicy | None = None) -> None:
        self.store = store
        self.machines = machines
        self.dialer = dialer
        self.settings = settings
        self.cancel_grace = cancel_grace
        self.on_end = on_end
        self.uploads = uploads or UploadPolicy()  # folders of the platform's host: off unless given roots
        self._assigning = asyncio.Lock()  # one assignment of GPUs at a time (per service)
        self._followers: dict[str, asyncio.Task[None]] = {}

    async def resume(self) -> None:
        """Follow again every experiment that was active when the service stopped."""
        for experiment in await self.store.list(statuses=(*ACTIVE, "cancelled")):
            if experiment.status == "cancelled" and experiment.ended_at:
                continue
            log.info("experiment %s on machine '%s': following again from byte %d", experiment.id,
                     experiment.machine_name, experiment.log_bytes)
            self._follow(experiment, None)

    async def stop(self) -> None:
        tasks = list(self._followers.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def create(self, *, experiment_id: str, team: str, machine_id: str, repository: str, ref: str,
                     command: str, gpus: int, env: Mapping[str, str], token: str,
                     token_id: str, folder: str = "") -> StoredExperiment:
        _check_source(repository, folder, ref)
        _check_request(repository or folder, ref, command, env)
        upload = await asyncio.to_thread(self.uploads.prepare, folder) if folder else None
        experiment_id = experiment_id or new_experiment_id()
        machine = await self.machines.get(machine_id)
        if machine.team != team:
            raise InvalidExperimentError(f"machine '{machine_id}' not found", field="machine")
        async with self._assigning:
            indices, uuids = await self._assign(machine, gpus)
            experiment = await self.store.add(StoredExperiment(
                id=experiment_id, team=team, machine_id=machine.id, machine_name=machine.name,
                repository=repository, ref=ref, command=command, gpus=gpus, status="starting",
                gpu_indices=indices, gpu_uuids=uuids, env_names=tuple(env), token_id=token_id,
                folder=str(upload.folder) if upload else ""))
        variables = {**env, "CUDA_VISIBLE_DEVICES": ",".join(uuids), "PLATFORM_TOKEN": token}
        follower = self._follow(experiment, Launch(variables, upload))
        try:
            started = await follower.started
        except MachineError as exc:
            await self.store.delete(experiment.id)  # nothing runs: the request failed
            raise exc from None
        if follower.ended_at_once:
            return await self._ended_at_once(started)
        return started

    async def _ended_at_once(self, started: StoredExperiment) -> StoredExperiment:
        """The launch saw the command's exit code: once its log is kept, a failure is a 422 (the
        experiment is kept, failed, with its log)."""
        task = self._followers.get(started.id)
        if task is not None:
            await asyncio.wait({task}, timeout=30.0)
        ended = await self.store.get(started.id)
        if ended.status == "failed":
            tail = (await self.store.read_log(ended.id, max(ended.log_bytes - 2000, 0), 2000)).decode(errors="replace")
            raise InvalidExperimentError(
                f"experiment {ended.id} on machine '{ended.machine_name}': the command failed at once "
                f"(exit {ended.exit_code}): {tail.strip()[-1000:] or 'no output'}", field="command")
        return ended

    async def _assign(self, machine: StoredMachine, gpus: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
        have = [(int(g["index"]), str(g.get("uuid") or g["index"])) for g in machine.facts.get("gpus", [])]
        if gpus > len(have):
            raise InvalidExperimentError(
                f"machine '{machine.name}' ({machine.id}) has {len(have)} GPU{'s' * (len(have) != 1)} "
                f"(its last check), not {gpus}: ask for at most {len(have)}", field="gpus")
        if gpus == 0:
            return (), ()
        holders: dict[int, str] = {}
        for other in await self.store.list(machine_id=machine.id, statuses=ACTIVE):
            for index in other.gpu_indices:
                holders[index] = other.id
        free = [(i, u) for i, u in have if i not in holders]
        if gpus > len(free):
            held = ", ".join(f"GPU {i} by {x}" for i, x in sorted(holders.items()))
            raise GpusBusyError(
                f"machine '{machine.name}' ({machine.id}) has {len(free)} free GPU{'s' * (len(free) != 1)}, not "
                f"{gpus} ({held}): wait for those to end, cancel one, or ask for fewer", field="gpus")
        chosen = free[:gpus]
        return tuple(i for i, _ in chosen), tuple(u for _, u in chosen)

    def _follow(self, experiment: StoredExperiment, launch: Launch | None) -> ExperimentFollower:
        follower = ExperimentFollower(experiment, self.store, self.machines, self.dialer, self.settings, self.on_end)
        task = asyncio.create_task(self._guarded(follower, launch), name=f"experiment {experiment.id}")
        self._followers[experiment.id] = task
        task.add_done_callback(lambda _t: self._forget(experiment.id, task))
        return follower

    def _forget(self, experiment_id: str, task: asyncio.Task[None]) -> None:
        if self._followers.get(experiment_id) is task:
            del self._followers[experiment_id]

    @staticmethod
    async def _guarded(follower: ExperimentFollower, launch: Launch | None) -> None:
        try:
            await follower.run(launch)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: said, and the request waiting for the start is answered
            log.exception("experiment %s: following failed", follower.id)
            if not follower.started.done():
                follower.started.set_exception(exc)

    async def cancel(self, experiment_id: str) -> StoredExperiment:
        """Stop the whole process group (TERM, then KILL); an ended experiment stays as it is."""
        experiment = await self.store.get(experiment_id)
        if experiment.ended:
            return experiment
        experiment = await self.store.update(experiment_id, unless_ended=True, status="cancelled",
                                             status_reason="cancelled")
        machine = await self.machines.get(experiment.machine_id)
        try:
            async with self.dialer.open_machine(machine.name, machine.target, machine.host_keys) as opened:
                await opened.connection.run("bash -s", input=cancel_command(experiment.id, self.cancel_grace),
                                            check=False)
        except (MachineError, asyncssh.Error, OSError) as exc:
            raise ExperimentUnavailableError(
                f"experiment {experiment.id} on machine '{machine.name}': cancelled, but the machine could not be "
                f"reached to stop it ({exc}): the platform stops following it when the machine answers", ) from None
        if experiment_id not in self._followers:  # no follower (e.g. it was lost): end it here
            experiment = await self.store.update(experiment_id, ended_at=experiment.ended_at or time.time())
            await self.on_end(experiment)
        return await self.store.get(experiment_id)


def _check_source(repository: str, folder: str, ref: str) -> None:
    if repository.strip() and folder:
        raise InvalidExperimentError("give repository (a git URL the machine clones) or folder (a folder of the "
                                     "platform's host to upload), not both", field="folder")
    if folder and ref:
        raise InvalidExperimentError("ref is for a repository: a folder is uploaded as it is; leave ref out",
                                     field="ref")


def _check_request(repository: str, ref: str, command: str, env: Mapping[str, str]) -> None:
    if not repository.strip():
        raise InvalidExperimentError("repository is empty: give a git URL the machine can clone, or folder: a "
                                     "folder of the platform's host to upload", field="repository")
    if repository.startswith("-") or ref.startswith("-"):
        raise InvalidExperimentError("repository and ref may not start with '-'", field="repository")
    if not command.strip():
        raise InvalidExperimentError("command is empty: give the command to run in the checkout", field="command")
    if len(env) > MAX_ENV:
        raise InvalidExperimentError(f"env has {len(env)} variables; at most {MAX_ENV}", field="env")
    for name in env:
        if not ENV_NAME.match(name):
            raise InvalidExperimentError(f"env: {name!r} is not a variable name (letters, digits and _, not "
                                         "starting with a digit)", field="env")
        if name in RESERVED_ENV:
            raise InvalidExperimentError(f"env: {name} is set by the platform", field="env")
