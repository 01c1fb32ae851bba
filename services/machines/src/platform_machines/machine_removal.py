"""Removing a machine, and what happens to its experiments.

A machine whose experiments have not ended (queued, starting, running) is not removed unless
asked to stop them (`stop_experiments`): the refusal names them. That counts the experiments it
is a Ray worker of (`ray.workers`) as well as its own. Asked, the queued ones are marked
cancelled and the others' process groups stopped as cancel does (an experiment it is a worker of
is cancelled whole: its cluster would lose a node), then the machine is forgotten. Ended
experiments stay, with their logs.
"""

from __future__ import annotations

import logging

from platform_machines.errors import ExperimentUnavailableError, MachineInUseError
from platform_machines.experiments import Experiments
from platform_machines.experiment_store import ACTIVE, QUEUED, StoredExperiment
from platform_machines.machine_store import MachineStore

log = logging.getLogger(__name__)


class MachineRemoval:
    def __init__(self, machines: MachineStore, experiments: Experiments) -> None:
        self.machines = machines
        self.experiments = experiments

    async def remove(self, machine_id: str, stop_experiments: bool) -> None:
        """Raises MachineNotFoundError, or MachineInUseError naming the experiments not ended."""
        machine = await self.machines.get(machine_id)
        busy = [x for x in await self.experiments.store.list(machine_id=machine_id) if not x.ended]
        as_worker = await self.worker_of(machine_id)
        busy += as_worker
        if busy and not stop_experiments:
            named = ", ".join(f"{x.id} ({x.status})" for x in busy)
            raise MachineInUseError(
                f"machine '{machine.name}' ({machine.id}) has {len(busy)} experiment{'s' * (len(busy) != 1)} "
                f"not ended: {named}: cancel {'them' if len(busy) > 1 else 'it'} first, or remove the machine with "
                "stop_experiments=true, which cancels them", field="stop_experiments")
        reason = f"cancelled: machine '{machine.name}', one of its Ray workers, was removed"
        for experiment in as_worker:
            try:
                await self.experiments.cancel(experiment.id, reason)
            except ExperimentUnavailableError as exc:  # it ends all the same; its processes may run on
                log.warning("%s", exc)
        try:
            stopped = await self.experiments.stop_on_machine(machine)
            await self.machines.delete(machine_id)
        finally:
            self.experiments.machine_removed(machine_id)
        stopped += as_worker
        log.info("machine %s removed%s", machine_id,
                 f", its experiments {', '.join(x.id for x in stopped)} stopped" if stopped else "")

    async def worker_of(self, machine_id: str) -> list[StoredExperiment]:
        """The experiments not ended that `machine_id` is a Ray worker of."""
        active = await self.experiments.store.list(statuses=(QUEUED, *ACTIVE))
        return [x for x in active if x.ray and any(w.machine_id == machine_id for w in x.ray.workers)]
