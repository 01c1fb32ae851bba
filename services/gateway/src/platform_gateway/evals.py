"""The evals service's request/reply API (simulusion.evals.v1) as async calls."""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from simulusion.evals.v1 import evals_pb2 as pb

from platform_gateway import nats_rpc
from platform_gateway.errors import UnavailableError, from_control_error

_Reply = TypeVar("_Reply", bound=Message)
# Creating an eval starts its experiment on the machine (the machines service dials it).
CREATE_TIMEOUT_S = 300.0
CANCEL_TIMEOUT_S = 90.0


class EvalsClient:
    def __init__(self, nc: NATS, *, timeout: float = 10.0) -> None:
        self._nc = nc
        self._timeout = timeout

    async def create(self, request: pb.CreateEvalRequest) -> pb.Eval:
        return (await self._call(subjects.EVALS_CREATE, request, pb.EvalReply, CREATE_TIMEOUT_S)).eval

    async def get(self, eval_id: str, with_samples: bool = False) -> pb.GetEvalReply:
        return await self._call(subjects.EVALS_GET, pb.GetEvalRequest(id=eval_id, with_samples=with_samples),
                                pb.GetEvalReply)

    async def list(self, team: str | None) -> list[pb.Eval]:
        reply = await self._call(subjects.EVALS_LIST, pb.ListEvalsRequest(team=team or ""), pb.ListEvalsReply)
        return list(reply.evals)

    async def cancel(self, eval_id: str) -> pb.Eval:
        return (await self._call(subjects.EVALS_CANCEL, pb.CancelEvalRequest(id=eval_id), pb.EvalReply,
                                 CANCEL_TIMEOUT_S)).eval

    async def read_log(self, eval_id: str, name: str, offset: int, length: int) -> pb.ReadEvalLogReply:
        request = pb.ReadEvalLogRequest(id=eval_id, name=name, offset=offset, length=length)
        return await self._call(subjects.EVALS_READ_LOG, request, pb.ReadEvalLogReply)

    async def _call(self, subject: str, request: Message, reply_type: type[_Reply],
                    timeout: float | None = None) -> _Reply:
        data = await nats_rpc.request(self._nc, subject, request.SerializeToString(), timeout=timeout or self._timeout,
                                      service="evals")
        try:
            reply = reply_type.FromString(data)
        except DecodeError:
            raise UnavailableError(f"evals unavailable: unreadable reply on {subject}") from None
        error = reply.error  # type: ignore[attr-defined]
        if error.code:
            raise from_control_error(error.code, error.message, error.field)
        return reply
