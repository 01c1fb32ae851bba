"""Machines behind NAT: added with a name and a login user, given one command to run, reached
through their reverse tunnel (tunnel_endpoint, tunnel_command).

The credential is a key pair the platform makes for the machine: its private half goes into the
command (shown once, in the reply that adds the machine; never stored, listed or logged), the
public half into the `machines` table. A key rather than a token or password because the OpenSSH
client offers a key without a prompt (a password needs a person or sshpass) and because the
endpoint only ever sees a signature: nothing it stores or logs lets anyone log in.

The machine's target is `<user>@127.0.0.1:<port>`, the loopback port assigned to its tunnel
(`SshTarget.tunnel`: the only way a loopback target gets past the address policy); its own host
key is pinned as for any machine, the tunnel only carries bytes. The tunnel's state, `waiting`
(never connected), `connected` or `down`, is kept in the table with the time it began; when the
tunnel comes up the machine is checked at once, when it goes down the machine is unreachable.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import socket
import time

import asyncssh

from platform_machines.errors import InvalidMachineError, MachineError
from platform_machines.machine_registry import MAX_NAME_LENGTH, UNCHECKED, MachineRegistry
from platform_machines.machine_store import StoredMachine, new_machine_id
from platform_machines.platform_key import PlatformKey
from platform_machines.ssh_command import SshHop, SshTarget
from platform_machines.tunnel_command import TunnelCommandParts, tunnel_command
from platform_machines.tunnel_state import CONNECTED, DOWN, WAITING, tunnel_summary

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
TUNNEL_KEY_COMMENT = "simulusion-tunnel"
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
PORT_TRIES = 50


class TunnelEndpointOffError(MachineError):
    """No tunnel endpoint is configured (PLATFORM_TUNNEL_PORT is 0)."""

    code = "failed_precondition"


@dataclasses.dataclass(frozen=True)
class TunnelEndpointAddress:
    """Where machines dial the endpoint, its host key, and the keepalive they use."""

    host: str
    port: int
    host_key: PlatformKey
    keepalive: float


def endpoint_host(listen: str, address: str) -> str:
    """PLATFORM_TUNNEL_ADDRESS, else the listen address, else (a wildcard) this host's name."""
    if address.strip():
        return address.strip()
    return socket.getfqdn() if listen in ("", "0.0.0.0", "::") else listen


class MachinesBehindNat:
    """Adds machines behind NAT and follows their tunnels (the endpoint's on_up and on_down)."""

    def __init__(self, registry: MachineRegistry, platform_key: PlatformKey,
                 endpoint: TunnelEndpointAddress | None) -> None:
        self.registry = registry
        self.store = registry.store
        self.platform_key = platform_key
        self.endpoint = endpoint

    async def add(self, name: str, user: str, ssh_port: int, team: str) -> tuple[StoredMachine, str]:
        """Store the machine (waiting for its tunnel) and make its command.

        Raises:
            TunnelEndpointOffError: PLATFORM_TUNNEL_PORT is not set.
            InvalidMachineError: a missing or too long name, an unusable user or port.
        """
        if self.endpoint is None:
            raise TunnelEndpointOffError(
                "machines behind NAT connect to the platform's tunnel endpoint, which is off: an operator sets "
                "PLATFORM_TUNNEL_PORT (and PLATFORM_TUNNEL_ADDRESS, the address machines dial)")
        name = name.strip()
        if not name or len(name) > MAX_NAME_LENGTH:
            raise InvalidMachineError(f"a machine behind NAT needs a name of 1 to {MAX_NAME_LENGTH} characters",
                                      field="name")
        if not _USER.fullmatch(user):
            raise InvalidMachineError(f"{user!r} is not a user name: the user on the machine that runs the command "
                                      "and that the platform logs in as, e.g. ubuntu", field="user")
        if not 1 <= ssh_port <= 65535:
            raise InvalidMachineError(f"the machine's SSH port {ssh_port} is not between 1 and 65535",
                                      field="ssh_port")
        tunnel_key = asyncssh.generate_private_key("ssh-ed25519", comment=TUNNEL_KEY_COMMENT)
        now = time.time()
        machine = StoredMachine(
            id=new_machine_id(), team=team, name=name,
            target=SshTarget(SshHop(user, LOOPBACK, await self._free_port()), tunnel=True),
            status=UNCHECKED, status_reason=tunnel_summary(WAITING, now),
            tunnel_key=tunnel_key.export_public_key("openssh").decode().strip(), tunnel_state=WAITING,
            tunnel_since=now, created_at=now)
        stored = await self.store.add(machine)
        command = tunnel_command(TunnelCommandParts(
            machine_id=stored.id, endpoint_host=self.endpoint.host, endpoint_port=self.endpoint.port,
            endpoint_host_key=self.endpoint.host_key.public_line, forward_port=stored.target.machine.port,
            machine_ssh_port=ssh_port, tunnel_private_key=tunnel_key.export_private_key("openssh").decode(),
            platform_key_line=self.platform_key.authorized_keys_line, keepalive_s=self.endpoint.keepalive))
        log.info("machine %s (%s) behind NAT added for team %s: tunnel port %d", stored.id, name, team,
                 stored.target.machine.port)
        return stored, command

    async def tunnel_up(self, machine_id: str) -> None:
        """The tunnel is up: record it and check the machine through it."""
        await self.store.set_tunnel_state(machine_id, CONNECTED, time.time())
        machine = await self.registry.check(machine_id)
        log.info("machine %s: checked through its tunnel: %s", machine_id, machine.status)

    async def tunnel_down(self, machine_id: str) -> None:
        """The tunnel is down: record it; the machine is unreachable until it is back."""
        await self.store.set_tunnel_state(machine_id, DOWN, time.time())
        await self.registry.mark_tunnel_unreachable(machine_id)

    async def all_down(self) -> None:
        """On start: no tunnel is up yet, whatever the table says from before."""
        now = time.time()
        for machine in await self.store.list():
            if machine.tunnel_key and machine.tunnel_state == CONNECTED:
                await self.store.set_tunnel_state(machine.id, DOWN, now)

    async def _free_port(self) -> int:
        taken = await self.store.tunnel_ports()
        for _ in range(PORT_TRIES):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind((LOOPBACK, 0))
                port = int(probe.getsockname()[1])
            if port not in taken:
                return port
        raise MachineError("no free loopback port for another tunnel")
