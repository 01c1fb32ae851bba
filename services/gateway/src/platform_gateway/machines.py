"""The machines service's request/reply API (simulusion.machines.v1) as async calls."""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from simulusion.machines.v1 import machines_pb2 as pb

from platform_gateway import nats_rpc
from platform_gateway.errors import UnavailableError, from_control_error

_Reply = TypeVar("_Reply", bound=Message)
# Adding or checking a machine connects over SSH (through bastions, each hop up to its connect
# timeout) and runs the check there: longer than other requests.
SSH_REQUEST_TIMEOUT_S = 90.0
# Removing a machine with stop_experiments stops each process group there (at once), as cancel.
DELETE_TIMEOUT_S = 120.0


class MachinesClient:
    """Adds, lists, checks and removes the users' GPU machines through the machines service."""

    def __init__(self, nc: NATS, *, timeout: float = 10.0, ssh_timeout: float = SSH_REQUEST_TIMEOUT_S) -> None:
        self._nc = nc
        self._timeout = timeout
        self._ssh_timeout = ssh_timeout

    async def ssh_key(self) -> pb.SshKeyReply:
        return await self._call(subjects.MACHINES_SSH_KEY, pb.SshKeyRequest(), pb.SshKeyReply)

    async def add(self, ssh_command: str, name: str, team: str) -> pb.Machine:
        request = pb.AddMachineRequest(ssh_command=ssh_command, name=name, team=team)
        reply = await self._call(subjects.MACHINES_ADD, request, pb.MachineReply, self._ssh_timeout)
        return reply.machine

    async def add_behind_nat(self, name: str, user: str, ssh_port: int, team: str) -> pb.AddMachineBehindNatReply:
        request = pb.AddMachineBehindNatRequest(name=name, user=user, ssh_port=ssh_port, team=team)
        return await self._call(subjects.MACHINES_ADD_BEHIND_NAT, request, pb.AddMachineBehindNatReply)

    async def list(self, team: str | None) -> list[pb.Machine]:
        reply = await self._call(subjects.MACHINES_LIST, pb.ListMachinesRequest(team=team or ""), pb.ListMachinesReply)
        return list(reply.machines)

    async def get(self, machine_id: str) -> pb.Machine:
        return (await self._call(subjects.MACHINES_GET, pb.GetMachineRequest(id=machine_id), pb.MachineReply)).machine

    async def check(self, machine_id: str) -> pb.Machine:
        reply = await self._call(subjects.MACHINES_CHECK, pb.CheckMachineRequest(id=machine_id), pb.MachineReply,
                                 self._ssh_timeout)
        return reply.machine

    async def accept_host_key(self, machine_id: str) -> pb.Machine:
        reply = await self._call(subjects.MACHINES_ACCEPT_HOST_KEY, pb.AcceptHostKeyRequest(id=machine_id),
                                 pb.MachineReply, self._ssh_timeout)
        return reply.machine

    async def delete(self, machine_id: str, stop_experiments: bool = False) -> None:
        request = pb.DeleteMachineRequest(id=machine_id, stop_experiments=stop_experiments)
        await self._call(subjects.MACHINES_DELETE, request, pb.DeleteMachineReply, DELETE_TIMEOUT_S)

    async def _call(self, subject: str, request: Message, reply_type: type[_Reply], timeout: float | None = None) -> _Reply:
        return await machines_request(self._nc, subject, request, reply_type, timeout or self._timeout)


async def machines_request(nc: NATS, subject: str, request: Message, reply_type: type[_Reply], timeout: float) -> _Reply:
    """One request to the machines service (machines and experiments alike): its reply, or its
    `ControlError` raised as the gateway's error.

    Raises:
        UnavailableError: no answer, or one that cannot be read.
    """
    data = await nats_rpc.request(nc, subject, request.SerializeToString(), timeout=timeout, service="machines")
    try:
        reply = reply_type.FromString(data)
    except DecodeError:
        raise UnavailableError(f"machines unavailable: unreadable reply on {subject}") from None
    error = reply.error  # type: ignore[attr-defined]
    if error.code:
        raise from_control_error(error.code, error.message, error.field)
    return reply
