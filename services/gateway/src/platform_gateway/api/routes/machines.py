"""The users' GPU machines over SSH, kept by the machines service (docs/gpu-machines.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status
from google.protobuf.json_format import MessageToDict
from simulusion.machines.v1 import machines_pb2 as pb

from platform_gateway.api.deps import AccessDep, IdentityDep, MachinesDep
from platform_gateway.schemas.machines import (
    MachineBehindNatCreate,
    MachineBehindNatCreated,
    MachineCreate,
    MachinePublic,
    MachinesPublic,
    SshKeyPublic,
)
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(
    prefix="/machines", tags=["machines"],
    responses={code: {"model": ErrorPublic} for code in (404, 422, 503)},
)



MachineId = Annotated[str, Path(min_length=1, max_length=64, description='a machine\'s id: "m-" and 12 hex digits')]


def _public(machine: pb.Machine) -> MachinePublic:
    data = MessageToDict(machine, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return MachinePublic.model_validate(data)


@router.get("/ssh-key", response_model=SshKeyPublic)
async def ssh_key(machines: MachinesDep) -> SshKeyPublic:
    """The platform's SSH key (made on first use): add `authorized_keys_line` to `~/.ssh/authorized_keys` of the
    machine's user before adding the machine."""
    reply = await machines.ssh_key()
    return SshKeyPublic(public_key=reply.public_key, fingerprint=reply.fingerprint,
                        authorized_keys_line=reply.authorized_keys_line)


@router.post("", response_model=MachinePublic, status_code=status.HTTP_201_CREATED,
             responses={409: {"model": ErrorPublic, "description": "a machine at that host and port is added already"}})
async def add_machine(body: MachineCreate, machines: MachinesDep, access: AccessDep,
                      identity: IdentityDep) -> MachinePublic:
    """Add a machine by pasting the SSH command your provider shows. The platform connects with its own key, pins
    the host key, and checks the GPUs, CPUs, memory, disk, Python and git. A command it cannot use, an address it
    must not dial, a machine it cannot reach or that refuses its key answer 422 saying what to do."""
    return _public(await machines.add(body.ssh, body.name, access.team_of(identity)))


@router.post("/behind-nat", response_model=MachineBehindNatCreated, status_code=status.HTTP_201_CREATED,
             responses={409: {"model": ErrorPublic, "description": "the platform's tunnel endpoint is off "
                                                                   "(PLATFORM_TUNNEL_PORT)"}})
async def add_machine_behind_nat(body: MachineBehindNatCreate, machines: MachinesDep, access: AccessDep,
                                 identity: IdentityDep) -> MachineBehindNatCreated:
    """Add a machine the platform cannot reach (a laptop, WSL, a box behind NAT). Run the returned command on it: it
    opens a reverse tunnel to the platform's tunnel endpoint and keeps it open, and the platform checks the machine
    through it. `tunnel.state` says whether it is up. The command is shown only in this reply."""
    reply = await machines.add_behind_nat(body.name, body.user, body.ssh_port, access.team_of(identity))
    return MachineBehindNatCreated(machine=_public(reply.machine), command=reply.command)


@router.get("", response_model=MachinesPublic)
async def list_machines(machines: MachinesDep, access: AccessDep, identity: IdentityDep) -> MachinesPublic:
    """Your team's machines, oldest first, with their status and what their last check found."""
    return MachinesPublic(machines=[_public(m) for m in await machines.list(access.list_filter(identity))])


@router.get("/{machine_id}", response_model=MachinePublic)
async def get_machine(machine_id: MachineId, machines: MachinesDep) -> MachinePublic:
    """One machine: where it is, its status and what its last check found."""
    return _public(await machines.get(machine_id))


@router.post("/{machine_id}/check", response_model=MachinePublic)
async def check_machine(machine_id: MachineId, machines: MachinesDep) -> MachinePublic:
    """Connect again and read the GPUs and the rest; the status says how it went (`ready`, `unreachable` with the
    reason, `host key changed`)."""
    return _public(await machines.check(machine_id))


@router.post("/{machine_id}/accept-host-key", response_model=MachinePublic,
             responses={409: {"model": ErrorPublic, "description": "no changed host key waits"}})
async def accept_host_key(machine_id: MachineId, machines: MachinesDep) -> MachinePublic:
    """Trust the host key the machine presents now instead of the pinned one (after making sure it was reinstalled
    or replaced), then check it."""
    return _public(await machines.accept_host_key(machine_id))


@router.delete("/{machine_id}", status_code=status.HTTP_204_NO_CONTENT,
               responses={409: {"model": ErrorPublic, "description": "experiments there have not ended (named); "
                                                                     "stop_experiments=true cancels them"}})
async def delete_machine(machine_id: MachineId, machines: MachinesDep,
                         stop_experiments: bool = Query(False, description="cancel its queued, starting and running "
                                                                           "experiments first (their process groups "
                                                                           "stopped as cancel does)")) -> Response:
    """Remove a machine. One whose experiments have not ended is refused (409, naming them) unless
    `stop_experiments=true`. Nothing else on the machine is touched; ended experiments and their logs stay."""
    await machines.delete(machine_id, stop_experiments)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
