"""NATS request/reply API of the evals service (simulusion.evals.v1), queue group `evals`:

    platform.evals.create     CreateEvalRequest -> EvalReply
    platform.evals.get        GetEvalRequest -> GetEvalReply (with its samples when asked)
    platform.evals.list       ListEvalsRequest (a team, or every team's) -> ListEvalsReply
    platform.evals.cancel     CancelEvalRequest -> EvalReply
    platform.evals.logs.read  ReadEvalLogRequest -> ReadEvalLogReply (a stored .eval log by byte range)

Errors fill the reply's `error`: "invalid_argument" (with `field`), "not_found", "unavailable",
"internal".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import DecodeError, Message
from platform_bus import flush_queued
from platform_contracts import subjects
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.evals.v1 import evals_pb2 as pb

from platform_evals.errors import EvalError, EvalNotFoundError, InvalidEvalError
from platform_evals.eval_messages import eval_message, sample_message
from platform_evals.eval_runs import EvalRuns

log = logging.getLogger(__name__)

MAX_READ = 512 * 1024
Work = Callable[[Any], Awaitable[Message]]


class EvalsApi:
    def __init__(self, nc: Any, runs: EvalRuns) -> None:
        self.nc = nc
        self.runs = runs
        self._subs: list[Any] = []
        self._working: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        handlers: dict[str, tuple[type[Any], type[Any], Work]] = {
            subjects.EVALS_CREATE: (pb.CreateEvalRequest, pb.EvalReply, self._create),
            subjects.EVALS_GET: (pb.GetEvalRequest, pb.GetEvalReply, self._get),
            subjects.EVALS_LIST: (pb.ListEvalsRequest, pb.ListEvalsReply, self._list),
            subjects.EVALS_CANCEL: (pb.CancelEvalRequest, pb.EvalReply, self._cancel),
            subjects.EVALS_READ_LOG: (pb.ReadEvalLogRequest, pb.ReadEvalLogReply, self._read_log),
        }
        for subject, (request_type, reply_type, work) in handlers.items():
            self._subs.append(await self.nc.subscribe(subject, queue=subjects.EVALS_QUEUE,
                                                      cb=self._handler(request_type, reply_type, work)))
        await flush_queued(self.nc)

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _handler(self, request_type: type[Any], reply_type: type[Any], work: Work) -> Callable[[Any], Awaitable[None]]:
        async def answer(msg: Any) -> None:
            data = await self._answer(msg, request_type, reply_type, work)
            if msg.reply:
                try:
                    await self.nc.publish(msg.reply, data)
                except Exception:  # the connection went away: nothing to answer on
                    log.exception("cannot answer %s", msg.subject)

        async def on_request(msg: Any) -> None:
            task = asyncio.create_task(answer(msg), name=f"evals {msg.subject}")
            self._working.add(task)
            task.add_done_callback(self._working.discard)

        return on_request

    @staticmethod
    async def _answer(msg: Any, request_type: type[Any], reply_type: type[Any], work: Work) -> bytes:
        try:
            try:
                request = request_type.FromString(msg.data)
            except DecodeError as exc:
                raise InvalidEvalError(f"the request is not a {request_type.DESCRIPTOR.full_name}: {exc}") from None
            return (await work(request)).SerializeToString()
        except EvalError as exc:
            error = ControlError(code=exc.code, message=str(exc), field=exc.field)
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            error = ControlError(code="internal", message=f"{type(exc).__name__}: {exc}")
        return bytes(reply_type(error=error).SerializeToString())

    async def _create(self, r: pb.CreateEvalRequest) -> pb.EvalReply:
        return pb.EvalReply(eval=eval_message(await self.runs.create(r)))

    async def _get(self, r: pb.GetEvalRequest) -> pb.GetEvalReply:
        stored = await self.runs.store.get(r.id)
        rows = await self.runs.store.samples(r.id)
        return pb.GetEvalReply(eval=eval_message(stored, len(rows)),
                               samples=[sample_message(row) for row in rows] if r.with_samples else [])

    async def _list(self, r: pb.ListEvalsRequest) -> pb.ListEvalsReply:
        counts = await self.runs.store.sample_counts()
        found = await self.runs.store.find(r.team or None)
        return pb.ListEvalsReply(evals=[eval_message(x, counts.get(x.id, 0)) for x in found])

    async def _cancel(self, r: pb.CancelEvalRequest) -> pb.EvalReply:
        return pb.EvalReply(eval=eval_message(await self.runs.cancel(r.id)))

    async def _read_log(self, r: pb.ReadEvalLogRequest) -> pb.ReadEvalLogReply:
        stored = await self.runs.store.get(r.id)
        storage = self.runs.storage
        if r.name not in {entry["name"] for entry in stored.logs}:
            raise EvalNotFoundError(f"eval '{r.id}' has no log {r.name!r}")
        size = await asyncio.to_thread(storage.size, r.id, r.name)
        length = min(r.length or MAX_READ, MAX_READ)
        offset = min(r.offset, size)
        data = await asyncio.to_thread(storage.read, r.id, r.name, offset, length) if offset < size else b""
        return pb.ReadEvalLogReply(data=data, offset=offset, size=size)
