"""The machines service as the evals service uses it, over NATS: a machine's facts, its eval's
experiment (create, get, cancel, its log by offset) and the files of its run folder."""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from platform_bus import BusUnavailableError
from platform_bus.messaging import request
from platform_contracts import subjects
from simulusion.machines.v1 import machines_pb2 as pb

from platform_evals.errors import EvalError, EvalNotFoundError, EvalUnavailableError, InvalidEvalError

_Reply = TypeVar("_Reply", bound=Message)
START_TIMEOUT_S = 300.0  # starting an experiment dials the machine
SSH_TIMEOUT_S = 90.0


class MachinesError(EvalError):
    """The machines service refused: its code and field, passed on."""

    def __init__(self, code: str, message: str, field: str = "") -> None:
        super().__init__(message, field)
        self.code = code


class MachinesClient:
    def __init__(self, nc: Any, timeout: float = 10.0) -> None:
        self.nc = nc
        self.timeout = timeout

    async def machine(self, machine_id: str) -> pb.Machine:
        reply = await self._call(subjects.MACHINES_GET, pb.GetMachineRequest(id=machine_id), pb.MachineReply)
        return reply.machine

    async def create(self, experiment: pb.CreateExperimentRequest) -> pb.Experiment:
        reply = await self._call(subjects.EXPERIMENTS_CREATE, experiment, pb.ExperimentReply, START_TIMEOUT_S)
        return reply.experiment

    async def get(self, experiment_id: str) -> pb.Experiment:
        reply = await self._call(subjects.EXPERIMENTS_GET, pb.GetExperimentRequest(id=experiment_id),
                                 pb.ExperimentReply)
        return reply.experiment

    async def cancel(self, experiment_id: str) -> pb.Experiment:
        reply = await self._call(subjects.EXPERIMENTS_CANCEL, pb.CancelExperimentRequest(id=experiment_id),
                                 pb.ExperimentReply, SSH_TIMEOUT_S)
        return reply.experiment

    async def log(self, experiment_id: str, offset: int) -> pb.ExperimentLogReply:
        return await self._call(subjects.EXPERIMENTS_LOGS, pb.ExperimentLogRequest(id=experiment_id, offset=offset),
                                pb.ExperimentLogReply)

    async def fetch(self, experiment_id: str, path: str, offset: int) -> pb.FetchExperimentFileReply:
        return await self._call(subjects.EXPERIMENTS_FETCH,
                                pb.FetchExperimentFileRequest(id=experiment_id, path=path, offset=offset),
                                pb.FetchExperimentFileReply, SSH_TIMEOUT_S)

    async def _call(self, subject: str, message: Message, reply_type: type[_Reply],
                    timeout: float | None = None) -> _Reply:
        try:
            answer = await request(self.nc, subject, message.SerializeToString(), timeout=timeout or self.timeout,
                                   service="machines")
        except BusUnavailableError as exc:
            raise EvalUnavailableError(str(exc)) from None
        try:
            reply = reply_type.FromString(answer.data)
        except DecodeError:
            raise EvalUnavailableError(f"machines unavailable: unreadable reply on {subject}") from None
        error = reply.error  # type: ignore[attr-defined]
        if error.code == "not_found":
            raise EvalNotFoundError(error.message, error.field)
        if error.code == "invalid_argument":
            raise InvalidEvalError(error.message, error.field)
        if error.code:
            raise MachinesError(error.code, error.message, error.field)
        return reply
