"""NATS request/reply API of the machines service (simulusion.machines.v1), queue group
`machines`:

    platform.machines.add              AddMachineRequest -> MachineReply
    platform.machines.get              GetMachineRequest -> MachineReply
    platform.machines.list             ListMachinesRequest (a team, or every team's) -> ListMachinesReply
    platform.machines.check            CheckMachineRequest -> MachineReply (the status says how it went)
    platform.machines.accept_host_key  AcceptHostKeyRequest -> MachineReply
    platform.machines.delete           DeleteMachineRequest -> DeleteMachineReply (refused while
                                       experiments there have not ended, unless stop_experiments)
    platform.machines.ssh_key          SshKeyRequest -> SshKeyReply (the public half only)
    platform.machines.add_behind_nat   AddMachineBehindNatRequest -> AddMachineBehindNatReply (the
                                       machine and its command, given once)

Errors fill the reply's `error` (a ControlError): "invalid_argument" (with `field`: an unusable
SSH command, a refused address, a machine that cannot be reached or refuses the key on add),
"already_exists", "not_found", "failed_precondition" (no tunnel endpoint for a machine behind
NAT; a machine to remove whose experiments have not ended), "internal".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from platform_bus import flush_queued
from platform_contracts import subjects
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.machines.v1 import machines_pb2 as pb

from platform_machines.errors import InvalidMachineError, MachineError
from platform_machines.machine_messages import machine_message
from platform_machines.machine_removal import MachineRemoval
from platform_machines.machine_registry import MachineRegistry
from platform_machines.platform_key import PlatformKey
from platform_machines.tunnel_machines import MachinesBehindNat

log = logging.getLogger(__name__)

Work = Callable[[Any], Awaitable[Message]]


class MachinesApi:
    """Serves the machines subjects from a MachineRegistry, the platform's key and the removal
    of machines (which stops their experiments)."""

    def __init__(self, nc: Any, registry: MachineRegistry, key: PlatformKey, behind_nat: MachinesBehindNat,
                 removal: MachineRemoval) -> None:
        self.nc = nc
        self.registry = registry
        self.key = key
        self.behind_nat = behind_nat
        self.removal = removal
        self._subs: list[Any] = []
        self._working: set[asyncio.Task[None]] = set()  # requests in progress: a slow SSH check holds up no other

    async def start(self) -> None:
        handlers: dict[str, tuple[type[Any], type[Any], Work]] = {
            subjects.MACHINES_ADD: (pb.AddMachineRequest, pb.MachineReply, self._add),
            subjects.MACHINES_GET: (pb.GetMachineRequest, pb.MachineReply, self._get),
            subjects.MACHINES_LIST: (pb.ListMachinesRequest, pb.ListMachinesReply, self._list),
            subjects.MACHINES_CHECK: (pb.CheckMachineRequest, pb.MachineReply, self._check),
            subjects.MACHINES_ACCEPT_HOST_KEY: (pb.AcceptHostKeyRequest, pb.MachineReply, self._accept),
            subjects.MACHINES_DELETE: (pb.DeleteMachineRequest, pb.DeleteMachineReply, self._delete),
            subjects.MACHINES_SSH_KEY: (pb.SshKeyRequest, pb.SshKeyReply, self._ssh_key),
            subjects.MACHINES_ADD_BEHIND_NAT: (pb.AddMachineBehindNatRequest, pb.AddMachineBehindNatReply,
                                               self._add_behind_nat),
        }
        for subject, (request_type, reply_type, work) in handlers.items():
            self._subs.append(await self.nc.subscribe(
                subject, queue=subjects.MACHINES_QUEUE, cb=self.handler(request_type, reply_type, work)))
        await flush_queued(self.nc)

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []
        if self._working:
            await asyncio.wait(self._working, timeout=5.0)

    async def _add(self, request: pb.AddMachineRequest) -> pb.MachineReply:
        machine = await self.registry.add(request.ssh_command, request.name, request.team)
        return pb.MachineReply(machine=machine_message(machine))

    async def _add_behind_nat(self, request: pb.AddMachineBehindNatRequest) -> pb.AddMachineBehindNatReply:
        machine, command = await self.behind_nat.add(request.name, request.user, request.ssh_port or 22, request.team)
        return pb.AddMachineBehindNatReply(machine=machine_message(machine), command=command)

    async def _get(self, request: pb.GetMachineRequest) -> pb.MachineReply:
        return pb.MachineReply(machine=machine_message(await self.registry.store.get(request.id)))

    async def _list(self, request: pb.ListMachinesRequest) -> pb.ListMachinesReply:
        found = await self.registry.store.list(request.team or None)
        return pb.ListMachinesReply(machines=[machine_message(m) for m in found])

    async def _check(self, request: pb.CheckMachineRequest) -> pb.MachineReply:
        return pb.MachineReply(machine=machine_message(await self.registry.check(request.id)))

    async def _accept(self, request: pb.AcceptHostKeyRequest) -> pb.MachineReply:
        return pb.MachineReply(machine=machine_message(await self.registry.accept_host_key(request.id)))

    async def _delete(self, request: pb.DeleteMachineRequest) -> pb.DeleteMachineReply:
        await self.removal.remove(request.id, request.stop_experiments)
        return pb.DeleteMachineReply()

    async def _ssh_key(self, request: pb.SshKeyRequest) -> pb.SshKeyReply:
        return pb.SshKeyReply(public_key=self.key.public_line, fingerprint=self.key.fingerprint,
                              authorized_keys_line=self.key.authorized_keys_line)

    def handler(self, request_type: type[Any], reply_type: type[Any], work: Work) -> Callable[[Msg], Awaitable[None]]:
        async def answer(msg: Msg) -> None:
            data = await self._answer(msg, request_type, reply_type, work)
            if msg.reply:
                try:
                    await self.nc.publish(msg.reply, data)
                except Exception:  # the connection went away: nothing to answer on
                    log.exception("cannot answer %s", msg.subject)

        async def on_request(msg: Msg) -> None:
            task = asyncio.create_task(answer(msg), name=f"machines {msg.subject}")
            self._working.add(task)
            task.add_done_callback(self._working.discard)

        return on_request

    @staticmethod
    async def _answer(msg: Msg, request_type: type[Any], reply_type: type[Any], work: Work) -> bytes:
        try:
            try:
                request = request_type.FromString(msg.data)
            except DecodeError as exc:
                raise InvalidMachineError(f"the request is not a {request_type.DESCRIPTOR.full_name}: {exc}") from None
            return (await work(request)).SerializeToString()
        except MachineError as exc:
            error = ControlError(code=exc.code, message=str(exc), field=exc.field)
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            error = ControlError(code="internal", message=f"{type(exc).__name__}: {exc}")
        return bytes(reply_type(error=error).SerializeToString())
