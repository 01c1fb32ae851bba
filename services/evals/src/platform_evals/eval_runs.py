"""Running evals: create (check, refuse what the machine lacks, start the experiment), follow
each active one (its progress from the experiment's log), and when its experiment ended bring
its `.eval` logs back into the storage and import their scores and samples; cancel.

One follower task per active eval, started again for every active eval when the service starts.
The experiment is the machines service's: a dropped connection, a restart of that service and
the machine's queue of GPUs are handled there.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time

from simulusion.evals.v1 import evals_pb2 as pb
from simulusion.machines.v1 import machines_pb2 as machines_pb

from platform_evals.errors import EvalError, EvalNotFoundError, InvalidEvalError
from platform_evals.eval_request import checked_request
from platform_evals.eval_store import ACTIVE, EvalStore, StoredEval
from platform_evals.log_storage import LogStorage
from platform_evals.logs_back import bring_back
from platform_evals.machines_client import MachinesClient
from platform_evals.progress import apply_lines, complete_lines
from platform_evals.requirements import is_platform_task, requirements_for
from platform_evals.runner_command import COMMAND, runner_variables
from platform_evals.task_catalog import task_needs
from platform_evals.task_checks import check_task, platform_task_notes

log = logging.getLogger(__name__)

LOG_PAGE = 256 * 1024  # the machines service's most log bytes a reply
FAILURE_TAIL = 1500


def new_eval_id() -> str:
    return "ev-" + secrets.token_hex(6)


class EvalRuns:
    def __init__(self, store: EvalStore, machines: MachinesClient, storage: LogStorage, poll_interval: float) -> None:
        self.store = store
        self.machines = machines
        self.storage = storage
        self.poll_interval = poll_interval
        self._followers: dict[str, asyncio.Task[None]] = {}

    async def resume(self) -> None:
        for stored in await self.store.find(statuses=ACTIVE):
            if stored.experiment_id:
                log.info("eval %s: following its experiment %s again", stored.id, stored.experiment_id)
                self._follow(stored.id)

    async def stop(self) -> None:
        tasks = list(self._followers.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def create(self, request: pb.CreateEvalRequest) -> StoredEval:
        ask = checked_request(request)
        machine = await self._machine(request.machine, request.team)
        needs = task_needs(ask.task)
        notes = (platform_task_notes(ask.task) if is_platform_task(ask.task)
                 else check_task(needs, machine, request.gpus, ask.task_args))
        requirements = requirements_for(ask.model, ask.packages, needs.dependency if needs else "", ask.task)
        stored = await self.store.add(StoredEval(
            id=request.id or new_eval_id(), team=request.team, task=ask.task, model=ask.model,
            machine_id=machine.id, machine_name=machine.name, status="queued", task_args=ask.task_args,
            model_args=ask.model_args, limit=ask.limit, epochs=ask.epochs, gpus=request.gpus,
            secret_names=sorted(ask.secrets), packages=ask.packages, requirements=requirements, notes=notes,
            experiment_id="x-" + secrets.token_hex(6), created_at=time.time()))
        spec = {"task": ask.task, "task_args": ask.task_args, "model": ask.model, "model_args": ask.model_args,
                "limit": ask.limit, "epochs": ask.epochs, "requirements": requirements}
        experiment = machines_pb.CreateExperimentRequest(
            id=stored.experiment_id, team=request.team, machine=machine.id, command=COMMAND, gpus=request.gpus,
            env={**ask.secrets, **runner_variables(spec)}, token=request.token, token_id=request.token_id)
        try:
            started = await self.machines.create(experiment)
        except InvalidEvalError as exc:
            if not await self._experiment_exists(stored.experiment_id):
                await self.store.delete(stored.id)
                raise
            # It failed at once (the environment did not install, say): kept, failed, with its log.
            reason = f"eval {stored.id}: {exc}"
            await self.store.update(stored.id, status="failed", status_reason=reason, ended_at=time.time())
            raise InvalidEvalError(reason) from None
        except BaseException:
            await self.store.delete(stored.id)
            raise
        log.info("eval %s (%s, %s) on machine '%s': experiment %s %s", stored.id, ask.task, ask.model,
                 machine.name, started.id, started.status)
        stored = await self.store.update(stored.id, status="queued" if started.status == "queued" else "running",
                                         started_at=started.started_at)
        self._follow(stored.id)
        return stored

    async def _machine(self, machine_id: str, team: str) -> machines_pb.Machine:
        try:
            machine = await self.machines.machine(machine_id)
        except EvalNotFoundError:
            machine = None
        if machine is None or machine.team != team:
            raise InvalidEvalError(f"machine '{machine_id}' not found: give one of your machines' ids "
                                   "(GET /v0/machines)", field="machine")
        if machine.status != "ready":
            raise InvalidEvalError(f"machine '{machine.name}' is {machine.status}"
                                   f"{': ' + machine.status_reason if machine.status_reason else ''}; check it "
                                   "again once it is ready", field="machine")
        return machine

    async def _experiment_exists(self, experiment_id: str) -> bool:
        try:
            await self.machines.get(experiment_id)
        except EvalError:
            return False
        return True

    async def cancel(self, eval_id: str) -> StoredEval:
        """Cancels its experiment (TERM to the runner's process group, KILL after the grace); the
        follower then brings back what it wrote. An ended eval stays as it is."""
        stored = await self.store.get(eval_id)
        if stored.ended:
            return stored
        await self.store.update(eval_id, unless_ended=True, status="cancelled", status_reason="cancelled")
        await self.machines.cancel(stored.experiment_id)
        return await self.store.get(eval_id)

    def _follow(self, eval_id: str) -> None:
        task = asyncio.create_task(self._guarded(eval_id), name=f"eval {eval_id}")
        self._followers[eval_id] = task
        task.add_done_callback(lambda _t: self._followers.pop(eval_id, None))

    async def _guarded(self, eval_id: str) -> None:
        try:
            await self._follow_until_ended(eval_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: the eval says so rather than waiting for ever
            log.exception("eval %s: following failed", eval_id)
            await self.store.update(eval_id, unless_ended=True, status="failed",
                                    status_reason=f"the evals service failed following it: {type(exc).__name__}: "
                                                  f"{exc}", ended_at=time.time())

    async def _follow_until_ended(self, eval_id: str) -> None:
        while True:
            stored = await self.store.get(eval_id)
            if stored.ended_at:  # (a cancelled one ends once its experiment did)
                return
            try:
                experiment = await self.machines.get(stored.experiment_id)
                stored = await self._read_progress(stored)
                if experiment.ended_at and stored.log_offset >= self._whole(experiment):
                    await self._finish(stored, experiment)
                    return
                if experiment.status in ("starting", "running") and stored.status == "queued":
                    await self.store.update(eval_id, unless_ended=True, status="running",
                                            started_at=experiment.started_at or time.time())
            except EvalNotFoundError as exc:
                await self.store.update(eval_id, unless_ended=True, status="lost", ended_at=time.time(),
                                        status_reason=f"its experiment {stored.experiment_id} is gone: {exc}")
                return
            except EvalError as exc:
                log.warning("eval %s: %s; trying again", eval_id, exc)
            await asyncio.sleep(self.poll_interval)

    @staticmethod
    def _whole(experiment: machines_pb.Experiment) -> int:
        return int(experiment.log_bytes)

    async def _read_progress(self, stored: StoredEval) -> StoredEval:
        """The progress lines of the experiment's log since the eval's offset (whole lines only)."""
        while True:
            page = await self.machines.log(stored.experiment_id, stored.log_offset)
            data = bytes(page.data)
            lines = complete_lines(data) if not page.ended else data
            if lines:
                stored = await self.store.update(stored.id, runner=apply_lines(stored.runner, lines),
                                                 log_offset=stored.log_offset + len(lines))
            if len(data) < LOG_PAGE or not lines:
                return stored

    async def _finish(self, stored: StoredEval, experiment: machines_pb.Experiment) -> None:
        runner = stored.runner
        notes: list[str] = []
        kept = 0
        if runner.logs:
            stored = await self.store.update(stored.id, unless_ended=True, status="importing")
            try:
                found = await bring_back(stored, self.machines, self.storage)
            except EvalError as exc:
                await self._end(stored.id, "failed", f"its logs could not be brought back: {exc}")
                return
            await self.store.put_samples(stored.id, found.samples)
            await self.store.update(stored.id, logs=found.logs, scores=found.scores)
            notes, kept = found.notes, len(found.samples)
        current = await self.store.get(stored.id)
        said = f" ({'; '.join(notes)})" if notes else ""
        if current.status == "cancelled" or experiment.status == "cancelled" or runner.finished == "cancelled":
            reason = current.status_reason or experiment.status_reason or "cancelled"
            what = f"; the {kept} samples it did are kept from its logs" if runner.logs else "; it wrote no log"
            await self._end(stored.id, "cancelled", reason + what + said)
        elif experiment.status == "lost":
            await self._end(stored.id, "lost", experiment.status_reason + said)
        elif runner.finished == "success" and experiment.status == "succeeded":
            await self._end(stored.id, "succeeded", "; ".join(notes))
        else:
            await self._end(stored.id, "failed", await self._failure(stored, experiment) + said)

    async def _failure(self, stored: StoredEval, experiment: machines_pb.Experiment) -> str:
        if stored.runner.error:
            return stored.runner.error[:FAILURE_TAIL]
        start = max(int(experiment.log_bytes) - FAILURE_TAIL, 0)
        tail = bytes((await self.machines.log(stored.experiment_id, start)).data).decode(errors="replace")
        return (f"{experiment.status_reason or 'its experiment ' + experiment.status} (experiment "
                f"{experiment.id}); the end of its log: {tail.strip()[-FAILURE_TAIL:]}")

    async def _end(self, eval_id: str, status: str, reason: str) -> None:
        ended = await self.store.update(eval_id, status=status, status_reason=reason, ended_at=time.time())
        log.info("eval %s ended: %s%s", eval_id, ended.status, f" ({reason[:200]})" if reason else "")
