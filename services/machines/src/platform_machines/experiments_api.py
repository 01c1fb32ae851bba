"""NATS request/reply API of experiments (simulusion.machines.v1), queue group `machines`:

    platform.machines.experiments.create  CreateExperimentRequest -> ExperimentReply
    platform.machines.experiments.get     GetExperimentRequest -> ExperimentReply
    platform.machines.experiments.list    ListExperimentsRequest (a team, or every team's) -> ListExperimentsReply
    platform.machines.experiments.cancel  CancelExperimentRequest -> ExperimentReply
    platform.machines.experiments.logs    ExperimentLogRequest -> ExperimentLogReply
    platform.machines.experiments.usage   ExperimentUsageRequest -> ExperimentUsageReply (GPU-hours)
    platform.machines.experiments.fetch   FetchExperimentFileRequest -> FetchExperimentFileReply (a file
                                          of the run folder by byte range, read over SSH)

and publishes ExperimentEnded on platform.experiments.ended when one ends. Errors as
the machines subjects' (`MachinesApi`): "invalid_argument" (with `field`), "not_found",
"unavailable" (the machine cannot be reached).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from platform_bus import flush_queued
from platform_bus.messaging import publish
from platform_contracts import subjects
from simulusion.machines.v1 import machines_pb2 as pb

from platform_machines.experiment_files import ExperimentFiles
from platform_machines.experiment_store import StoredExperiment
from platform_machines.experiment_usage import day_start, gpu_usage_rows, parse_day
from platform_machines.experiments import Experiments
from platform_machines.machines_api import MachinesApi
from platform_machines.ray_spec import RaySpec, RayWorker

MAX_LOG_REPLY = 256 * 1024


def experiment_message(x: StoredExperiment, queue_position: int = 0) -> pb.Experiment:
    message = pb.Experiment(
        id=x.id, team=x.team, machine_id=x.machine_id, machine_name=x.machine_name, repository=x.repository,
        ref=x.ref, command=x.command, gpus=x.gpus, gpu_indices=list(x.gpu_indices), gpu_uuids=list(x.gpu_uuids),
        env_names=list(x.env_names), status=x.status, status_reason=x.status_reason, created_at=x.created_at,
        started_at=x.started_at, ended_at=x.ended_at, run_dir=x.run_dir, log_bytes=x.log_bytes,
        platform_url=x.platform_url, token_id=x.token_id, folder=x.folder,
        share_gpus=x.share_gpus, queue_position=queue_position)
    if x.exit_code is not None:
        message.exit_code = x.exit_code
    if x.ray is not None:
        message.ray.CopyFrom(ray_message(x.ray))
    return message


def ray_message(spec: RaySpec) -> pb.RayCluster:
    return pb.RayCluster(
        workers=[pb.RayWorker(machine_id=w.machine_id, machine_name=w.machine_name, state=w.state,
                              state_reason=w.reason, run_dir=w.run_dir) for w in spec.workers],
        setup=spec.setup, venv=spec.venv, port=spec.port, head_address=spec.head_address, start_args=spec.start_args)


def ray_spec(message: pb.RayCluster) -> RaySpec:
    """The settings asked for (checked by `Experiments.create`)."""
    return RaySpec(workers=tuple(RayWorker(machine_id=w.machine_id) for w in message.workers), setup=message.setup,
                   venv=message.venv, port=message.port, head_address=message.head_address,
                   start_args=message.start_args)


class ExperimentsApi:
    """Serves the experiments subjects, with the machines API's request handling."""

    def __init__(self, nc: Any, experiments: Experiments, requests: MachinesApi, files: ExperimentFiles) -> None:
        self.nc = nc
        self.experiments = experiments
        self.files = files
        self.requests = requests
        self._subs: list[Any] = []

    async def start(self) -> None:
        handlers = {
            subjects.EXPERIMENTS_CREATE: (pb.CreateExperimentRequest, pb.ExperimentReply, self._create),
            subjects.EXPERIMENTS_GET: (pb.GetExperimentRequest, pb.ExperimentReply, self._get),
            subjects.EXPERIMENTS_LIST: (pb.ListExperimentsRequest, pb.ListExperimentsReply, self._list),
            subjects.EXPERIMENTS_CANCEL: (pb.CancelExperimentRequest, pb.ExperimentReply, self._cancel),
            subjects.EXPERIMENTS_LOGS: (pb.ExperimentLogRequest, pb.ExperimentLogReply, self._logs),
            subjects.EXPERIMENTS_USAGE: (pb.ExperimentUsageRequest, pb.ExperimentUsageReply, self._usage),
            subjects.EXPERIMENTS_FETCH: (pb.FetchExperimentFileRequest, pb.FetchExperimentFileReply, self._fetch),
        }
        for subject, (request_type, reply_type, work) in handlers.items():
            self._subs.append(await self.nc.subscribe(
                subject, queue=subjects.MACHINES_QUEUE,
                cb=self.requests.handler(request_type, reply_type, work)))  # type: ignore[arg-type]
        await flush_queued(self.nc)

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    async def publish_ended(self, experiment: StoredExperiment) -> None:
        event = pb.ExperimentEnded(id=experiment.id, token_id=experiment.token_id, status=experiment.status)
        await publish(self.nc, subjects.EXPERIMENTS_ENDED, event.SerializeToString())

    async def _create(self, r: pb.CreateExperimentRequest) -> pb.ExperimentReply:
        created = await self.experiments.create(
            experiment_id=r.id, team=r.team, machine_id=r.machine, repository=r.repository, ref=r.ref,
            command=r.command, gpus=r.gpus, env=dict(r.env), token=r.token, token_id=r.token_id,
            share_gpus=r.share_gpus, folder=r.folder, ray=ray_spec(r.ray) if r.HasField("ray") else None)
        return await self._reply(created)

    async def _reply(self, experiment: StoredExperiment) -> pb.ExperimentReply:
        positions = await self.experiments.store.queue_positions() if experiment.status == "queued" else {}
        return pb.ExperimentReply(experiment=experiment_message(experiment, positions.get(experiment.id, 0)))

    async def _get(self, r: pb.GetExperimentRequest) -> pb.ExperimentReply:
        return await self._reply(await self.experiments.store.get(r.id))

    async def _list(self, r: pb.ListExperimentsRequest) -> pb.ListExperimentsReply:
        found = await self.experiments.store.list(r.team or None)
        positions = await self.experiments.store.queue_positions()
        return pb.ListExperimentsReply(experiments=[experiment_message(x, positions.get(x.id, 0)) for x in found])

    async def _cancel(self, r: pb.CancelExperimentRequest) -> pb.ExperimentReply:
        return await self._reply(await self.experiments.cancel(r.id))

    async def _usage(self, r: pb.ExperimentUsageRequest) -> pb.ExperimentUsageReply:
        since = parse_day(r.since_day, "since")
        until = parse_day(r.until_day, "until")
        start, end = day_start(since), day_start(until + dt.timedelta(days=1))
        found = await self.experiments.store.started_between(start, end, r.team or None)
        return pb.ExperimentUsageReply(rows=gpu_usage_rows(found, start, end, time.time()))

    async def _fetch(self, r: pb.FetchExperimentFileRequest) -> pb.FetchExperimentFileReply:
        piece = await self.files.fetch(r.id, r.path, r.offset, r.max_bytes)
        return pb.FetchExperimentFileReply(data=piece.data, offset=piece.offset, size=piece.size)

    async def _logs(self, r: pb.ExperimentLogRequest) -> pb.ExperimentLogReply:
        experiment = await self.experiments.store.get(r.id)  # before the read: `ended` then holds for it
        limit = min(r.max_bytes or MAX_LOG_REPLY, MAX_LOG_REPLY)
        offset = min(r.offset, experiment.log_bytes)
        data = await self.experiments.store.read_log(r.id, offset, limit)
        after = offset + len(data)
        return pb.ExperimentLogReply(data=data, offset=offset, next_offset=after, status=experiment.status,
                                     ended=bool(experiment.ended_at) and after >= experiment.log_bytes)
