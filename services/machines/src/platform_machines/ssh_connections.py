"""SSH connections to a stored machine: through its bastions, with the platform's key only, each
hop's host key pinned. The one place that dials machines; checks (and, later, experiments) take their connection from `open_machine`.

Trust on first use: a hop with no pinned key is accepted and its key returned in
`MachineConnection.host_keys` for the caller to pin. A hop whose pinned key differs refuses the
connection before the platform authenticates (`HostKeyChangedError`, with the key it presented,
for a person to accept). The first hop's address is judged by the `AddressPolicy` and dialled as
the address judged; nothing is read from ~/.ssh (no config, no agent, no known_hosts of the
platform's user). A machine behind NAT (`SshTarget.tunnel`) is dialled on its reverse tunnel's
loopback port without the address policy: only targets the platform made for a tunnel carry that flag.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import asyncssh

from platform_machines.address_policy import AddressPolicy
from platform_machines.errors import InvalidMachineError, MachineError
from platform_machines.platform_key import PlatformKey
from platform_machines.ssh_command import SshHop, SshTarget

KEEPALIVE_INTERVAL_S = 15.0  # PLATFORM_MACHINES_KEEPALIVE's default
KEEPALIVE_COUNT = 3  # unanswered keepalives in a row and the connection is closed as dead


class MachineUnreachableError(InvalidMachineError):
    """The machine (or a bastion) cannot be reached or refuses the platform's key; the message
    names the machine and says why and what to do."""


class HostKeyChangedError(MachineError):
    """A hop presented another host key than the one pinned; nothing was sent to it."""

    code = "failed_precondition"

    def __init__(self, message: str, presented: Mapping[str, str]) -> None:
        super().__init__(message)
        self.presented = dict(presented)  # hop address -> the OpenSSH public key line it presented


@dataclass
class MachineConnection:
    """An open connection to the machine (`connection`), and every hop's host key as presented."""

    connection: asyncssh.SSHClientConnection
    host_keys: dict[str, str] = field(default_factory=dict)  # hop address -> OpenSSH public key line


@dataclass(frozen=True)
class SshDialer:
    """How the platform dials: its key, the addresses it may dial, how long a hop may take, and
    the seconds between keepalives: a connection whose link went away silently (no FIN, no RST:
    a cable, a NAT, a suspended laptop) is closed after KEEPALIVE_COUNT unanswered ones, so a
    command waiting on it ends (an experiment's follower then dials again) instead of waiting
    on TCP's retries for many minutes."""

    key: PlatformKey
    policy: AddressPolicy
    connect_timeout: float = 15.0
    keepalive: float = KEEPALIVE_INTERVAL_S

    @asynccontextmanager
    async def open_machine(self, name: str, target: SshTarget,
                           pinned: Mapping[str, str]) -> AsyncIterator[MachineConnection]:
        """Connect to the machine `name` (for messages) through its bastions.

        Args:
            pinned: hop address (`SshHop.address`) -> pinned OpenSSH public key line; a hop
                missing here is trusted on first use.

        Raises:
            HostKeyChangedError: a hop's key differs from its pinned one.
            MachineUnreachableError: refused, timed out, key not authorized, ... (named).
            RefusedAddressError: the first hop's address may not be dialled.
        """
        hops = (*target.jumps, target.machine)
        async with AsyncExitStack() as stack:
            seen: dict[str, str] = {}
            tunnel: asyncssh.SSHClientConnection | None = None
            for position, hop in enumerate(hops):
                role = "the machine" if position == len(hops) - 1 else f"the bastion {hop}"
                host = hop.host if tunnel is not None else await self._first_hop(target, hop)
                conn = await self._connect(name, role, hop, host, tunnel, pinned.get(hop.address))
                stack.push_async_callback(_close, conn)
                key = conn.get_server_host_key()
                if key is not None:
                    seen[hop.address] = key.export_public_key("openssh").decode().strip()
                tunnel = conn
            assert tunnel is not None
            yield MachineConnection(tunnel, seen)

    async def _first_hop(self, target: SshTarget, hop: SshHop) -> str:
        if target.tunnel:  # a reverse tunnel's loopback port: allowed for tunnelled machines only
            if target.jumps or not ipaddress.ip_address(hop.host).is_loopback:
                raise InvalidMachineError(f"a tunnelled machine is reached on loopback only, not {hop}", field="ssh")
            return hop.host
        return str(await self.policy.resolve(hop.host, hop.port))

    async def _connect(self, name: str, role: str, hop: SshHop, host: str,
                       tunnel: asyncssh.SSHClientConnection | None, pinned: str | None) -> asyncssh.SSHClientConnection:
        known_hosts: tuple[list[asyncssh.SSHKey], list[asyncssh.SSHKey], list[asyncssh.SSHKey]] | None = None if pinned is None else ([asyncssh.import_public_key(pinned)], [], [])
        where = f"machine {name!r}: {role} {hop}" if role != "the machine" else f"machine {name!r} ({hop})"
        try:
            return await asyncssh.connect(
                host, hop.port, tunnel=tunnel, username=hop.user, client_keys=[self.key.private],
                known_hosts=known_hosts, config=None, agent_path=None, agent_forwarding=False, password=None,
                preferred_auth="publickey", connect_timeout=self.connect_timeout, login_timeout=self.connect_timeout,
                keepalive_interval=self.keepalive, keepalive_count_max=KEEPALIVE_COUNT)
        except asyncssh.HostKeyNotVerifiable:
            presented = await self._presented_key(host, hop.port, tunnel)
            raise HostKeyChangedError(
                f"{where}: the host key changed since it was pinned; the platform refuses to connect until a person "
                f"accepts the new key (POST /v0/machines/{{id}}/accept-host-key) after making sure the machine was "
                f"reinstalled or replaced", {hop.address: presented}) from None
        except asyncssh.PermissionDenied:
            raise MachineUnreachableError(
                f"{where}: key not authorized: the machine refuses the platform's key; add this line to "
                f"~{hop.user}/.ssh/authorized_keys there: {self.key.authorized_keys_line}", field="ssh") from None
        except ConnectionRefusedError:
            raise MachineUnreachableError(
                f"{where}: connection refused: nothing listens on port {hop.port}; check the host and the port your "
                "provider shows, and that the machine is running", field="ssh") from None
        except (TimeoutError, asyncio.TimeoutError):
            raise MachineUnreachableError(
                f"{where}: timed out after {self.connect_timeout:g} s: no SSH answer; check the address and port, "
                "and that a firewall lets SSH through", field="ssh") from None
        except (OSError, asyncssh.Error) as exc:
            reason = getattr(exc, "reason", "") or getattr(exc, "strerror", "") or str(exc) or type(exc).__name__
            raise MachineUnreachableError(f"{where}: unreachable: {reason}", field="ssh") from None

    async def _presented_key(self, host: str, port: int, tunnel: asyncssh.SSHClientConnection | None) -> str:
        try:
            key = await asyncio.wait_for(asyncssh.get_server_host_key(host, port, tunnel=tunnel, config=None),
                                         self.connect_timeout)
        except (OSError, asyncssh.Error, TimeoutError):
            return ""
        return "" if key is None else key.export_public_key("openssh").decode().strip()


async def _close(conn: asyncssh.SSHClientConnection) -> None:
    conn.close()
    await conn.wait_closed()


def fingerprint(public_key_line: str) -> str:
    """`SHA256:...` of an OpenSSH public key line ("" for "")."""
    if not public_key_line:
        return ""
    return str(asyncssh.import_public_key(public_key_line).get_fingerprint("sha256"))
