"""Helpers of the step path tests (holds, vector sessions, saved snapshots): sessions started with
any session options, readers of step events and batches, and a stand-in of the
recorder's saved snapshot API.

`SnapshotStoreStandIn` answers the recorder's contract (RECORDER_SAVE_SNAPSHOT and
RECORDER_GET_SNAPSHOT, control messages) from a dict, as the gateway tests' StandInBroker
answers the broker's: it lets the env host's side be tested on its own. The cross-service tests
use the real recorder.
"""

from __future__ import annotations

import time
from typing import Any

from envhost_testkit import CARTPOLE, read_subject
from platform_bus import flush_queued
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb
from simulusion.session.v1.options_pb2 import SessionOptions


async def start(nc: Any, host_id: str, session_id: str, *, entry: control_pb.CatalogEntry = CARTPOLE,
                timeout: float = 60.0, **options: Any) -> control_pb.StartInstanceReply:
    """Start a session with any SessionOptions fields (record, num_envs, record_frames...)."""
    request = control_pb.StartInstanceRequest(session_id=session_id, entry=entry,
                                              options=SessionOptions(env_id=entry.id, **options))
    msg = await nc.request(subjects.envhost_start(host_id), request.SerializeToString(), timeout=timeout)
    reply = control_pb.StartInstanceReply.FromString(msg.data)
    assert not reply.HasField("error"), reply.error
    return reply


def action(n: int) -> values_pb.Value:
    return values_pb.Value(discrete=n)


def hold(n: int, steps: int, **fields: Any) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(hold=env_pb.HoldRequest(action=action(n), steps=steps, **fields))


def batch(*requests: tuple[int, env_pb.EnvRequest]) -> env_pb.EnvRequest:
    """A batch request of (sub-environment index, request) pairs."""
    request = env_pb.EnvRequest()
    for index, inner in requests:
        request.batch.requests.add(index=index).request.CopyFrom(inner)
    return request


def step(n: int, **fields: Any) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(step=env_pb.StepRequest(action=action(n), **fields))


def reset(seed: int | None = None) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(reset=env_pb.ResetRequest(seed=seed))


async def batch_messages(js: Any, session_id: str, count: int, timeout: float = 15.0) -> list[Any]:
    """The first `count` StepEventBatch messages of the session (raw NATS messages)."""
    return await read_subject(js, subjects.session_step_batches(session_id), count, timeout)


class SnapshotStoreStandIn:
    """A stand-in of the recorder's saved snapshot API, its snapshots in a dict."""

    def __init__(self, nc: Any) -> None:
        self.nc = nc
        self.saved: dict[str, tuple[env_pb.SavedSnapshot, bytes, str]] = {}
        self._subscriptions: list[Any] = []

    async def start(self) -> SnapshotStoreStandIn:
        self._subscriptions = [
            await self.nc.subscribe(subjects.RECORDER_SAVE_SNAPSHOT, cb=self._on_save),
            await self.nc.subscribe(subjects.RECORDER_GET_SNAPSHOT, cb=self._on_get),
        ]
        await flush_queued(self.nc)
        return self

    async def stop(self) -> None:
        for subscription in self._subscriptions:
            await subscription.unsubscribe()

    async def _on_save(self, msg: Any) -> None:
        request = control_pb.SaveSnapshotRequest.FromString(msg.data)
        snapshot = env_pb.SavedSnapshot()
        snapshot.CopyFrom(request.snapshot)
        snapshot.id = f"saved{len(self.saved) + 1}-{int(time.time() * 1000)}"
        self.saved[snapshot.id] = (snapshot, request.state, request.format)
        await msg.respond(control_pb.SaveSnapshotReply(snapshot=snapshot).SerializeToString())

    async def _on_get(self, msg: Any) -> None:
        request = control_pb.GetSavedSnapshotRequest.FromString(msg.data)
        found = self.saved.get(request.id)
        if found is None:
            reply = control_pb.GetSavedSnapshotReply(error=control_pb.ControlError(
                code="not_found", message=f"no saved snapshot {request.id!r}"))
        else:
            snapshot, state, fmt = found
            reply = control_pb.GetSavedSnapshotReply(snapshot=snapshot, state=state if request.with_state else b"",
                                                     format=fmt)
        await msg.respond(reply.SerializeToString())
