"""Experiments on the users' machines (simulusion.machines.v1, run by the machines service) as
async calls, and the API tokens they get: one made for each experiment (its PLATFORM_TOKEN),
revoked when the machines service says the experiment ended (`ExperimentTokens`)."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from google.protobuf.message import Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from simulusion.machines.v1 import machines_pb2 as pb

from platform_gateway.identity.authenticator import Authenticator, Identity
from platform_gateway.identity.tokens import TokenRecord
from platform_gateway.machines import machines_request

log = logging.getLogger(__name__)
_Reply = TypeVar("_Reply", bound=Message)
# Starting clones the repository on the machine: longer than other requests.
START_TIMEOUT_S = 300.0
CANCEL_TIMEOUT_S = 90.0


class ExperimentsClient:
    def __init__(self, nc: NATS, *, timeout: float = 10.0) -> None:
        self._nc = nc
        self._timeout = timeout

    async def create(self, request: pb.CreateExperimentRequest) -> pb.Experiment:
        return (await self._call(subjects.EXPERIMENTS_CREATE, request, pb.ExperimentReply, START_TIMEOUT_S)).experiment

    async def usage(self, team: str | None, since_day: str, until_day: str) -> list[pb.GpuUsageRow]:
        """GPU-hours of experiments per day, team and machine."""
        request = pb.ExperimentUsageRequest(team=team or "", since_day=since_day, until_day=until_day)
        return list((await self._call(subjects.EXPERIMENTS_USAGE, request, pb.ExperimentUsageReply)).rows)

    async def get(self, experiment_id: str) -> pb.Experiment:
        reply = await self._call(subjects.EXPERIMENTS_GET, pb.GetExperimentRequest(id=experiment_id),
                                 pb.ExperimentReply)
        return reply.experiment

    async def list(self, team: str | None) -> list[pb.Experiment]:
        reply = await self._call(subjects.EXPERIMENTS_LIST, pb.ListExperimentsRequest(team=team or ""),
                                 pb.ListExperimentsReply)
        return list(reply.experiments)

    async def cancel(self, experiment_id: str) -> pb.Experiment:
        reply = await self._call(subjects.EXPERIMENTS_CANCEL, pb.CancelExperimentRequest(id=experiment_id),
                                 pb.ExperimentReply, CANCEL_TIMEOUT_S)
        return reply.experiment

    async def logs(self, experiment_id: str, offset: int, max_bytes: int = 0) -> pb.ExperimentLogReply:
        return await self._call(subjects.EXPERIMENTS_LOGS,
                                pb.ExperimentLogRequest(id=experiment_id, offset=offset, max_bytes=max_bytes),
                                pb.ExperimentLogReply)

    async def _call(self, subject: str, request: Message, reply_type: type[_Reply],
                    timeout: float | None = None) -> _Reply:
        return await machines_request(self._nc, subject, request, reply_type, timeout or self._timeout)


class ExperimentTokens:
    """The API token of each experiment: made on create, revoked when it ends (told on
    platform.experiments.ended, and on start for those that ended meanwhile)."""

    def __init__(self, nc: NATS, identity: Authenticator, experiments: ExperimentsClient) -> None:
        self._nc = nc
        self._identity = identity
        self._experiments = experiments
        self._sub: Any = None

    async def mint(self, experiment_id: str, team: str, identity: Identity) -> tuple[TokenRecord, str] | None:
        """A member token of `team` for the experiment (or the eval, `ev-...`, whose experiment
        gets it); None when the platform has no API tokens (PLATFORM_AUTH=none: nothing needs one)."""
        store = self._identity.tokens
        if store is None:
            return None
        parent = identity.token
        what = "eval" if experiment_id.startswith("ev-") else "experiment"
        return await store.issue(f"{what} {experiment_id}", team, "member", identity.subject,
                                 parent.expires_at if parent is not None else None,
                                 parent_id=parent.id if parent is not None else None)

    async def revoke(self, token_id: str) -> None:
        store = self._identity.tokens
        if store is None or not token_id:
            return
        revocation = await store.revoke(token_id)
        for revoked in revocation.revoked_ids if revocation is not None else ():
            self._identity.forget(revoked)

    async def start(self) -> None:
        if self._identity.tokens is None:
            return
        self._sub = await self._nc.subscribe(subjects.EXPERIMENTS_ENDED, cb=self._on_ended)
        try:
            for experiment in await self._experiments.list(None):
                if experiment.ended_at and experiment.token_id:
                    await self.revoke(experiment.token_id)
        except Exception as exc:  # noqa: BLE001 - the machines service is not up yet: its events revoke
            log.warning("cannot list experiments to revoke the tokens of ended ones: %s", exc)

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None

    async def _on_ended(self, msg: Any) -> None:
        try:
            event = pb.ExperimentEnded.FromString(msg.data)
            await self.revoke(event.token_id)
            log.info("experiment %s %s: its API token %s revoked", event.id, event.status, event.token_id)
        except Exception:
            log.exception("cannot revoke an ended experiment's token")
