"""Experiments on the users' GPU machines, run and followed by the machines service
(docs/gpu-machines.md, "Experiments").

The log stream is a WebSocket, `/v0/experiments/{id}/logs/stream?offset=N` (`?token=` when the
platform needs one, as the session stream): the server sends text messages, each a JSON
`ExperimentLogPublic` with new text, as the machine writes it, and closes (1000) after the one
with `"ended": true`. The browser sends nothing; to resume, open it again at the last
`next_offset`. Close codes: 4401 bad token, 4404 no such experiment, 1011 other failures.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Annotated

from fastapi import APIRouter, Path, Query, WebSocket, WebSocketDisconnect, status
from google.protobuf.json_format import MessageToDict
from simulusion.machines.v1 import machines_pb2 as pb

from platform_gateway.api.deps import AccessDep, GatewayDep, IdentityDep
from platform_gateway.api.routes.stream import _authorized
from platform_gateway.errors import GatewayError, NotFoundError
from platform_gateway.schemas.experiments import (ExperimentCreate, ExperimentLogPublic, ExperimentPublic,
                                                  ExperimentsPublic)
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(prefix="/experiments", tags=["experiments"],
                   responses={code: {"model": ErrorPublic} for code in (404, 422, 503)})
stream_router = APIRouter()

ExperimentId = Annotated[str, Path(min_length=1, max_length=64, description='an experiment\'s id: "x-" and 12 hex')]
STREAM_POLL_S = 0.5
LOG_READ_BYTES = 256 * 1024


def _public(experiment: pb.Experiment) -> ExperimentPublic:
    data = MessageToDict(experiment, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return ExperimentPublic.model_validate(data)


def utf8_whole(data: bytes, ended: bool) -> int:
    """How many of `data`'s bytes end on a whole UTF-8 character (all of them once it ended)."""
    if ended:
        return len(data)
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead
            continue
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return len(data) - back if need > back else len(data)
    return len(data)


def _log_public(reply: pb.ExperimentLogReply) -> ExperimentLogPublic:
    data = bytes(reply.data)
    ended = reply.ended
    keep = utf8_whole(data, ended)
    return ExperimentLogPublic(offset=reply.offset, next_offset=reply.offset + keep,
                               text=data[:keep].decode(errors="replace"), ended=ended and keep == len(data),
                               status=reply.status)


@router.post("", response_model=ExperimentPublic, status_code=status.HTTP_201_CREATED)
async def create_experiment(body: ExperimentCreate, gateway: GatewayDep, access: AccessDep,
                            identity: IdentityDep) -> ExperimentPublic:
    """Clone the repository on the machine and check out `ref` (or upload `folder` of the platform's host there),
    and start the command, detached, on `gpus` GPUs of its own (or shared with others that asked, `share_gpus`),
    with PLATFORM_URL and PLATFORM_TOKEN (a token of your team, revoked when it ends). When fewer GPUs are free
    than asked for, it is `queued` (with its `queue_position`) and starts as soon as they are. A repository that
    does not clone, a folder that may not be uploaded, a command that fails at once (for one that starts at once),
    more GPUs than the machine has: 422 saying what to fix. With `ray`: a Ray head here and Ray workers on the other
    machines given, stopped when it ends (a worker machine unknown, repeated, the head itself or not ready: 422)."""
    await access.require("machine_id", body.machine, identity)
    # ray.workers: the machines service checks they are the team's (a 422 naming ray.workers, not a 404)
    team = access.team_of(identity)
    experiment_id = "x-" + secrets.token_hex(6)
    minted = await gateway.experiment_tokens.mint(experiment_id, team, identity)
    record, secret = minted if minted is not None else (None, "")
    request = pb.CreateExperimentRequest(
        id=experiment_id, team=team, machine=body.machine, repository=body.repository, folder=body.folder,
        ref=body.ref,
        command=body.command, gpus=body.gpus, env=body.env, token=secret, token_id=record.id if record else "",
        share_gpus=body.share_gpus)
    if body.ray is not None:
        request.ray.CopyFrom(pb.RayCluster(
            workers=[pb.RayWorker(machine_id=w) for w in body.ray.workers], setup=body.ray.setup, venv=body.ray.venv,
            port=body.ray.port, head_address=body.ray.head_address, start_args=body.ray.start_args))
    try:
        return _public(await gateway.experiments.create(request))
    except BaseException:
        # Nothing runs (or it failed at once): its token is of no use. A failed-at-once one is
        # kept, and its end revokes the token as well.
        if record is not None:
            await gateway.experiment_tokens.revoke(record.id)
        raise


@router.get("", response_model=ExperimentsPublic)
async def list_experiments(gateway: GatewayDep, access: AccessDep, identity: IdentityDep) -> ExperimentsPublic:
    """Your team's experiments, newest first."""
    found = await gateway.experiments.list(access.list_filter(identity))
    return ExperimentsPublic(experiments=[_public(x) for x in found])


@router.get("/{experiment_id}", response_model=ExperimentPublic)
async def get_experiment(experiment_id: ExperimentId, gateway: GatewayDep) -> ExperimentPublic:
    """One experiment: its status, exit code, GPUs and how much of its log the platform holds."""
    return _public(await gateway.experiments.get(experiment_id))


@router.post("/{experiment_id}/cancel", response_model=ExperimentPublic)
async def cancel_experiment(experiment_id: ExperimentId, gateway: GatewayDep) -> ExperimentPublic:
    """Stop the command's whole process group (TERM, then KILL after a grace); a queued one is only marked
    cancelled. An ended experiment is left as it is."""
    return _public(await gateway.experiments.cancel(experiment_id))


@router.get("/{experiment_id}/logs", response_model=ExperimentLogPublic)
async def experiment_log(experiment_id: ExperimentId, gateway: GatewayDep,
                         offset: int = Query(0, ge=0, le=2**62, description="the byte to start at (a next_offset)")
                         ) -> ExperimentLogPublic:
    """The log (stdout and stderr) from byte `offset`, as the platform holds it (it survives the machine); up to
    256 KiB a call. Follow it with `next_offset`, or with the WebSocket `/logs/stream`."""
    return _log_public(await gateway.experiments.logs(experiment_id, offset, LOG_READ_BYTES))


@stream_router.websocket("/experiments/{experiment_id}/logs/stream")
async def experiment_log_stream(websocket: WebSocket, experiment_id: str) -> None:
    gateway = websocket.app.state.gateway
    if not await _authorized(websocket, gateway.identity):
        return
    try:
        offset = max(int(websocket.query_params.get("offset", "0")), 0)
    except ValueError:
        offset = 0
    try:
        await gateway.access.require("experiment_id", experiment_id, websocket.state.identity)
        await gateway.experiments.get(experiment_id)
    except NotFoundError as exc:
        await websocket.accept()
        await websocket.close(4404, exc.message[:120])
        return
    await websocket.accept()
    try:
        while True:
            page = _log_public(await gateway.experiments.logs(experiment_id, offset, LOG_READ_BYTES))
            if page.text or page.ended:
                await websocket.send_text(json.dumps(page.model_dump(), separators=(",", ":")))
            offset = page.next_offset
            if page.ended:
                await websocket.close(1000)
                return
            if not page.text:
                await asyncio.sleep(STREAM_POLL_S)
    except WebSocketDisconnect:
        return
    except GatewayError as exc:
        await websocket.close(1011, exc.message[:120])
