"""Experiments on the machines: create (check the request, assign GPUs, start or queue),
cancel, start the queued ones, stop a machine's experiments before it is removed, and follow
every active one across the service's restarts.

GPUs (`gpu_assignment`): a request for more GPUs than the machine has is a 422. One for more
than are available now is `queued`: kept with its variables sealed (`queued_launches`) and
started, in the order of creation per machine, as soon as its machine has enough GPUs for it
(when an experiment there ends, and on the service's start). A request that needs GPUs also
queues while others wait before it on the machine (first come, first served). `gpus: 0` never
waits and sees no GPU (`CUDA_VISIBLE_DEVICES=`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import replace
from typing import Any

import asyncssh

from platform_machines.errors import (ExperimentUnavailableError, InvalidExperimentError, MachineError,
                                      MachineNotFoundError)
from platform_machines.experiment_follower import ExperimentFollower, FollowSettings, Launch
from platform_machines.experiment_script import ENV_NAME, cancel_command
from platform_machines.experiment_store import (ACTIVE, QUEUED, ExperimentStore, StoredExperiment,
                                                new_experiment_id)
from platform_machines.folder_source import FolderSource, UploadPolicy
from platform_machines.gpu_assignment import assign_gpus, holders_text, machine_gpus
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.queued_launches import LaunchUnreadableError, QueuedLaunches
from platform_machines.ray_cluster import RayWorkers
from platform_machines.ray_spec import RaySpec
from platform_machines.ssh_connections import SshDialer

log = logging.getLogger(__name__)

RESERVED_ENV = ("CUDA_VISIBLE_DEVICES", "PLATFORM_URL", "PLATFORM_TOKEN", "PLATFORM_EXPERIMENT_ID")
MAX_ENV = 200
STOP_WAIT_S = 10.0  # after a cancel, how long removing a machine waits for a follower to see the end


class Experiments:
    def __init__(self, store: ExperimentStore, machines: MachineStore, dialer: SshDialer, settings: FollowSettings,
                 cancel_grace: float, on_end: Callable[[StoredExperiment], Awaitable[None]],
                 launches: QueuedLaunches, uploads: UploadPolicy | None = None) -> None:
        self.store = store
        self.machines = machines
        self.dialer = dialer
        self.settings = settings
        self.cancel_grace = cancel_grace
        self.on_end = on_end
        self.launches = launches
        self.uploads = uploads or UploadPolicy()  # folders of the platform's host: off unless given roots
        self._assigning = asyncio.Lock()  # one assignment of GPUs at a time (per service)
        self._followers: dict[str, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()  # queue starts and their watchers
        self._removing: set[str] = set()  # machines whose queue must not start any more
        self.ray = RayWorkers(store, machines, dialer, settings, self._stop_for_worker)  # Ray workers, if any

    async def resume(self) -> None:
        """Follow again every experiment that was active when the service stopped, and start
        the queued ones that can start now."""
        for experiment in await self.store.list(statuses=(*ACTIVE, "cancelled")):
            if experiment.status == "cancelled" and experiment.ended_at:
                continue
            log.info("experiment %s on machine '%s': following again from byte %d", experiment.id,
                     experiment.machine_name, experiment.log_bytes)
            self._follow(experiment, None)
        for machine_id in {x.machine_id for x in await self.store.queued()}:
            self._soon(self.start_queued(machine_id))
        await self.ray.resume()

    async def stop(self) -> None:
        await self.ray.stop()
        tasks = [*self._followers.values(), *self._background]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def create(self, *, experiment_id: str, team: str, machine_id: str, repository: str, ref: str,
                     command: str, gpus: int, env: Mapping[str, str], token: str, token_id: str,
                     share_gpus: bool = False, folder: str = "", ray: RaySpec | None = None) -> StoredExperiment:
        """Start it now (a 422 when it fails at once), or queue it when its GPUs are not available."""
        _check_source(repository, folder, ref)
        _check_request(repository or folder, ref, command, env)
        upload = await asyncio.to_thread(self.uploads.prepare, folder) if folder else None
        experiment_id = experiment_id or new_experiment_id()
        machine = await self.machines.get(machine_id)
        if machine.team != team:
            raise InvalidExperimentError(f"machine '{machine_id}' not found", field="machine")
        if ray is not None:
            ray = await self.ray.check(team, machine, ray)
        asked = StoredExperiment(
            id=experiment_id, team=team, machine_id=machine.id, machine_name=machine.name, repository=repository,
            ref=ref, command=command, gpus=gpus, status="starting", env_names=tuple(env), token_id=token_id,
            share_gpus=share_gpus, folder=str(upload.folder) if upload else "", ray=ray)
        async with self._assigning:
            have = machine_gpus(machine.facts)
            if gpus > len(have):
                raise InvalidExperimentError(
                    f"machine '{machine.name}' ({machine.id}) has {len(have)} GPU{'s' * (len(have) != 1)} "
                    f"(its last check), not {gpus}: ask for at most {len(have)}", field="gpus")
            holders = await self.store.list(machine_id=machine.id, statuses=ACTIVE)
            before = await self.store.queued(machine.id) if gpus else []
            assigned = None if before else assign_gpus(have, holders, gpus, share_gpus)
            if assigned is None:
                return await self._queue(asked, machine, holders, len(before), {**env, "PLATFORM_TOKEN": token})
            experiment = await self.store.add(replace(asked, gpu_indices=assigned.indices, gpu_uuids=assigned.uuids))
        variables = {**env, "CUDA_VISIBLE_DEVICES": ",".join(assigned.uuids), "PLATFORM_TOKEN": token}
        follower = self._follow(experiment, Launch(variables, upload))
        try:
            started = await follower.started
        except MachineError as exc:
            await self.store.delete(experiment.id)  # nothing runs: the request failed
            raise exc from None
        if follower.ended_at_once:
            if started.ray:
                await self.ray.never_started(started.id, "the command ended at once")
            return await self._ended_at_once(started)
        self._start_workers(started, variables, upload)
        return started

    def _start_workers(self, started: StoredExperiment, variables: Mapping[str, str],
                       upload: FolderSource | None) -> None:
        if started.ray and started.ray.workers:
            self.ray.start(started, variables, upload)

    async def _queue(self, asked: StoredExperiment, machine: StoredMachine, holders: list[StoredExperiment],
                     waiting: int, variables: dict[str, str]) -> StoredExperiment:
        why = (f"{waiting} experiment{'s' * (waiting != 1)} queued before it" if waiting
               else f"{holders_text(holders)}")
        reason = (f"waiting for {asked.gpus} GPU{'s' * (asked.gpus != 1)} of machine '{machine.name}' "
                  f"{'to share' if asked.share_gpus else 'of its own'} ({why})")
        await self.launches.put(asked.id, variables)
        try:
            queued = await self.store.add(replace(asked, status=QUEUED, status_reason=reason))
        except BaseException:
            await self.launches.drop(asked.id)
            raise
        log.info("experiment %s on machine '%s' queued: %s", queued.id, machine.name, reason)
        return queued

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

    async def _stop_for_worker(self, experiment_id: str, reason: str) -> None:
        """A Ray worker failed before it joined: its experiment cannot have its cluster."""
        try:
            await self.cancel(experiment_id, reason)
        except ExperimentUnavailableError as exc:
            log.warning("%s", exc)

    async def start_queued(self, machine_id: str) -> None:
        """Start the machine's queued experiments, oldest first, while its GPUs allow; the first
        one that does not fit waits, and those after it with it."""
        starting: list[StoredExperiment] = []
        failed: list[tuple[StoredExperiment, str]] = []
        async with self._assigning:
            if machine_id in self._removing:
                return
            try:
                machine = await self.machines.get(machine_id)
            except MachineNotFoundError:
                return
            have = machine_gpus(machine.facts)
            holders = await self.store.list(machine_id=machine_id, statuses=ACTIVE)
            for queued in await self.store.queued(machine_id):
                if queued.gpus > len(have):
                    failed.append((queued, f"machine '{machine.name}' has {len(have)} GPUs now (its last check), "
                                           f"not {queued.gpus}"))
                    continue
                assigned = assign_gpus(have, holders, queued.gpus, queued.share_gpus)
                if assigned is None:
                    break
                moved = await self.store.update(
                    queued.id, if_status=QUEUED, status="starting", status_reason="",
                    gpu_indices=json.dumps(list(assigned.indices)), gpu_uuids=json.dumps(list(assigned.uuids)))
                if moved.status == "starting":
                    holders.append(moved)
                    starting.append(moved)
        for experiment, reason in failed:
            await self._fail_start(experiment.id, reason, if_status=QUEUED)
        for experiment in starting:
            await self._start(experiment)

    async def _start(self, experiment: StoredExperiment) -> None:
        """Launch a queued experiment whose GPUs were just assigned."""
        log.info("experiment %s on machine '%s': starting from the queue on GPUs %s", experiment.id,
                 experiment.machine_name, list(experiment.gpu_indices))
        try:
            variables = await self.launches.take(experiment.id)
        except LaunchUnreadableError as exc:
            await self._fail_start(experiment.id, f"cannot start: {exc}")
            return
        variables["CUDA_VISIBLE_DEVICES"] = ",".join(experiment.gpu_uuids)
        try:  # a folder is packed as it is when the experiment starts, checked again
            upload = await asyncio.to_thread(self.uploads.prepare, experiment.folder) if experiment.folder else None
        except InvalidExperimentError as exc:
            await self._fail_start(experiment.id, f"cannot start: {exc}")
            return
        follower = self._follow(experiment, Launch(variables, upload))
        self._soon(self._watch_start(follower, variables, upload))

    async def _watch_start(self, follower: ExperimentFollower, variables: Mapping[str, str],
                           upload: FolderSource | None) -> None:
        """A queued experiment whose start fails (it does not clone, the machine cannot be
        reached) is `failed` with the reason; one whose command fails at once ends as any.
        Its Ray workers (if any) start once it started."""
        try:
            started = await follower.started
        except Exception as exc:  # noqa: BLE001 - said in the experiment's reason
            await self._fail_start(follower.id, str(exc) or type(exc).__name__)
            return
        if follower.ended_at_once:
            await self.ray.never_started(started.id, "the command ended at once")
        else:
            self._start_workers(started, variables, upload)

    async def _fail_start(self, experiment_id: str, reason: str, if_status: str | None = None) -> None:
        log.warning("experiment %s: %s", experiment_id, reason)
        await self.launches.drop(experiment_id)
        ended = await self.store.update(experiment_id, unless_ended=True, if_status=if_status, status="failed",
                                        status_reason=reason, ended_at=time.time())
        if ended.status == "failed" and ended.status_reason == reason:
            await self._ended(ended)

    async def _ended(self, experiment: StoredExperiment) -> None:
        """Said (its token is revoked), and the machine's queue may move. Its Ray workers that
        run are stopped by their keepers (`ray_cluster`); those never launched are marked so."""
        if experiment.ray and experiment.ray.workers and experiment.status in ("queued", "failed", "cancelled"):
            await self.ray.never_started_if_unlaunched(experiment.id, f"the experiment {experiment.status}")
        await self.on_end(experiment)
        self._soon(self.start_queued(experiment.machine_id))

    def _soon(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(self._logged(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _logged(work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("starting queued experiments failed")

    def _follow(self, experiment: StoredExperiment, launch: Launch | None) -> ExperimentFollower:
        follower = ExperimentFollower(experiment, self.store, self.machines, self.dialer, self.settings, self._ended)
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

    async def cancel(self, experiment_id: str, reason: str = "cancelled") -> StoredExperiment:
        """Stop the whole process group (TERM, then KILL); a queued one is only marked
        cancelled; an ended experiment stays as it is."""
        experiment = await self.store.get(experiment_id)
        if experiment.ended:
            return experiment
        if experiment.status == QUEUED:
            async with self._assigning:
                experiment = await self.store.update(experiment_id, if_status=QUEUED, status="cancelled",
                                                     status_reason=f"{reason} while queued", ended_at=time.time())
            if experiment.status == "cancelled" and experiment.ended_at:  # it was queued: nothing runs
                await self.launches.drop(experiment_id)
                await self._ended(experiment)
                return experiment
        experiment = await self.store.update(experiment_id, unless_ended=True, status="cancelled",
                                             status_reason=reason)
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
            await self._ended(experiment)
        return await self.store.get(experiment_id)

    async def stop_on_machine(self, machine: StoredMachine) -> list[StoredExperiment]:
        """End every experiment of `machine` before it is removed: the queued ones cancelled,
        the others' process groups stopped as cancel does (at once). When the machine cannot be
        reached they end all the same, their reason saying their processes may still run there.
        Its queue starts nothing any more."""
        self._removing.add(machine.id)
        reason = f"cancelled: machine '{machine.name}' was removed"
        left = [x for x in await self.store.list(machine_id=machine.id) if not x.ended_at]
        for queued in (x for x in left if x.status == QUEUED):
            await self.cancel(queued.id, reason)
        running = [x for x in left if x.status != QUEUED]
        await asyncio.gather(*(self._stop_before_removal(x.id, reason) for x in running))
        return [await self.store.get(x.id) for x in left]

    def machine_removed(self, machine_id: str) -> None:
        self._removing.discard(machine_id)

    async def _stop_before_removal(self, experiment_id: str, reason: str) -> None:
        try:
            await self.cancel(experiment_id, reason)
            reached = True
        except ExperimentUnavailableError as exc:
            log.warning("%s", exc)
            reached = False
        task = self._followers.get(experiment_id)
        if task is not None and reached:  # it sees the end and keeps the last of the log
            await asyncio.wait({task}, timeout=STOP_WAIT_S + 4 * self.settings.poll_interval)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        experiment = await self.store.get(experiment_id)
        if not experiment.ended_at:
            if not reached:
                reason += ("; the machine could not be reached to stop its processes: they may still run there "
                           f"(run_dir {experiment.run_dir or 'unknown'})")
            ended = await self.store.update(experiment_id, status_reason=reason, ended_at=time.time())
            await self.on_end(ended)


def _check_source(repository: str, folder: str, ref: str) -> None:
    if repository.strip() and folder:
        raise InvalidExperimentError("give repository (a git URL the machine clones) or folder (a folder of the "
                                     "platform's host to upload), not both", field="folder")
    if folder and ref:
        raise InvalidExperimentError("ref is for a repository: a folder is uploaded as it is; leave ref out",
                                     field="ref")
    if ref and not repository.strip() and not folder:
        raise InvalidExperimentError("ref is for a repository: give the repository to check it out of, or leave ref "
                                     "out for a command alone (an empty checkout)", field="ref")


def _check_request(repository: str, ref: str, command: str, env: Mapping[str, str]) -> None:
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
