"""Inspect evaluations on the users' machines, run by the evals service as experiments
(docs/evals.md). Each eval belongs to the caller's team (`team_access`: another team's is 404)."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Response, status
from fastapi.responses import StreamingResponse
from google.protobuf.json_format import MessageToDict
from simulusion.evals.v1 import evals_pb2 as pb

from platform_gateway.api.deps import AccessDep, GatewayDep, IdentityDep
from platform_gateway.errors import InvalidArgumentError
from platform_gateway.eval_viewer import viewer_url
from platform_gateway.schemas.evals import EvalCreate, EvalDetailPublic, EvalPublic, EvalsPublic
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(prefix="/evals", tags=["evals"], responses={code: {"model": ErrorPublic} for code in (404, 422, 503)})

EvalId = Annotated[str, Path(min_length=1, max_length=64, description='an eval\'s id: "ev-" and 12 hex')]
LogName = Annotated[str, Path(min_length=1, max_length=255, description="a log's name (the eval's `logs`)")]
READ_BYTES = 512 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _log_url(eval_id: str, name: str) -> str:
    return f"/v0/evals/{eval_id}/logs/{name}"


def _fields(message: pb.Eval) -> dict[str, Any]:
    data = MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    data["task_args"] = json.loads(data.pop("task_args_json") or "{}")
    data["model_args"] = json.loads(data.pop("model_args_json") or "{}")
    data["requirements"] = [line for line in data["requirements"].splitlines() if line]
    for log in data["logs"]:
        log["url"] = _log_url(message.id, log["name"])
    return data


def _public(message: pb.Eval) -> EvalPublic:
    return EvalPublic.model_validate(_fields(message))


def _detail(reply: pb.GetEvalReply) -> EvalDetailPublic:
    samples = []
    for sample in reply.samples:
        row = MessageToDict(sample, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
        row["scores"] = {name: json.loads(value) for name, value in sample.scores.items()}
        row["metadata"] = json.loads(row.pop("metadata_json") or "{}")
        row["transcript_url"] = viewer_url(reply.eval.id, sample.log, sample.sample_id, sample.epoch)
        samples.append(row)
    return EvalDetailPublic.model_validate({**_fields(reply.eval), "samples": samples})


@router.post("", response_model=EvalPublic, status_code=status.HTTP_201_CREATED)
async def create_eval(body: EvalCreate, gateway: GatewayDep, access: AccessDep, identity: IdentityDep) -> EvalPublic:
    """Run an Inspect task against a model on one of your machines: a virtual environment there with pinned
    inspect-ai and inspect-evals (for `platform_sdk/episodes`, the platform's own SDK wheel instead) and the
    model provider's package (made once, reused), then the eval, its progress in `progress`. `secrets` go to its process only. A task needing what the machine lacks (a Docker
    sandbox, GPUs), a bad task or model name, a machine of another team: 422 saying what to fix."""
    await access.require("machine_id", body.machine, identity)
    team = access.team_of(identity)
    eval_id = "ev-" + secrets.token_hex(6)
    minted = await gateway.experiment_tokens.mint(eval_id, team, identity)
    record, token = minted if minted is not None else (None, "")
    request = pb.CreateEvalRequest(
        id=eval_id, team=team, machine=body.machine, task=body.task, task_args_json=json.dumps(body.task_args),
        model=body.model, model_args_json=json.dumps(body.model_args), limit=body.limit, epochs=body.epochs,
        gpus=body.gpus, secrets=body.secrets, packages=body.packages, token=token,
        token_id=record.id if record else "")
    try:
        return _public(await gateway.evals.create(request))
    except BaseException:
        if record is not None:  # nothing runs: its token is of no use
            await gateway.experiment_tokens.revoke(record.id)
        raise


@router.get("", response_model=EvalsPublic)
async def list_evals(gateway: GatewayDep, access: AccessDep, identity: IdentityDep) -> EvalsPublic:
    """Your team's evals, newest first (without their samples)."""
    return EvalsPublic(evals=[_public(x) for x in await gateway.evals.list(access.list_filter(identity))])


@router.get("/{eval_id}", response_model=EvalDetailPublic)
async def get_eval(eval_id: EvalId, gateway: GatewayDep) -> EvalDetailPublic:
    """One eval: its status and live progress, then each score's metrics with their standard errors, its logs
    and a row per sample and epoch."""
    return _detail(await gateway.evals.get(eval_id, with_samples=True))


@router.post("/{eval_id}/cancel", response_model=EvalPublic)
async def cancel_eval(eval_id: EvalId, gateway: GatewayDep) -> EvalPublic:
    """Stop it on the machine (its experiment is cancelled); the logs it wrote are brought back. An ended eval
    is left as it is."""
    return _public(await gateway.evals.cancel(eval_id))


class RangeNotSatisfiableError(InvalidArgumentError):
    status = 416
    code = "range_not_satisfiable"

    def __init__(self, message: str) -> None:
        super().__init__(message, field="Range")


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """(first, last) of a single `bytes=` range; None when absent; RangeNotSatisfiableError (416) otherwise."""
    if not header:
        return None
    found = _RANGE.match(header.strip())
    if found is None or found.group(1) == found.group(2) == "":
        raise RangeNotSatisfiableError(f"Range {header!r}: give one range, bytes=first-last, bytes=first- or "
                                       "bytes=-suffix")
    first_text, last_text = found.groups()
    if first_text == "":
        first, last = max(size - int(last_text), 0), size - 1
    else:
        first, last = int(first_text), min(int(last_text), size - 1) if last_text else size - 1
    if first >= size or first > last:
        raise RangeNotSatisfiableError(f"Range {header!r}: the file has {size} bytes")
    return first, last


def _log_headers(size: int, wanted: tuple[int, int] | None) -> dict[str, str]:
    first, last = wanted if wanted is not None else (0, size - 1)
    headers = {"Accept-Ranges": "bytes", "Content-Length": str(max(last - first + 1, 0))}
    if wanted is not None:
        headers["Content-Range"] = f"bytes {first}-{last}/{size}"
    return headers


@router.get("/{eval_id}/logs/{name}", response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}}}, 206: {"description": "a byte range"},
                       416: {"model": ErrorPublic}})
async def eval_log(eval_id: EvalId, name: LogName, gateway: GatewayDep,
                   range_header: Annotated[str, Header(alias="Range")] = "") -> Response:
    """An eval's `.eval` log (a zip of its samples' transcripts), whole or one byte range (`Range: bytes=a-b`,
    answered 206), as Inspect's log viewer reads it."""
    head = await gateway.evals.read_log(eval_id, name, 0, 1)
    size = int(head.size)
    wanted = _byte_range(range_header, size)
    first, last = wanted if wanted is not None else (0, size - 1)

    async def body() -> AsyncIterator[bytes]:
        offset = first
        while offset <= last:
            piece = await gateway.evals.read_log(eval_id, name, offset, min(READ_BYTES, last - offset + 1))
            if not piece.data:
                return
            yield bytes(piece.data)
            offset += len(piece.data)

    return StreamingResponse(body(), status_code=206 if wanted is not None else 200,
                             headers=_log_headers(size, wanted), media_type="application/octet-stream")


@router.head("/{eval_id}/logs/{name}", response_class=Response,
             responses={200: {"description": "the log's headers: Content-Length, Accept-Ranges"},
                        206: {"description": "a byte range's headers"}, 416: {"model": ErrorPublic}})
async def eval_log_head(eval_id: EvalId, name: LogName, gateway: GatewayDep,
                        range_header: Annotated[str, Header(alias="Range")] = "") -> Response:
    """The headers `GET` would answer, without the body: the log's size (`Content-Length`) and
    `Accept-Ranges: bytes`, for a viewer to plan its range reads."""
    size = int((await gateway.evals.read_log(eval_id, name, 0, 1)).size)
    wanted = _byte_range(range_header, size)
    return Response(status_code=206 if wanted is not None else 200, headers=_log_headers(size, wanted),
                    media_type="application/octet-stream")
