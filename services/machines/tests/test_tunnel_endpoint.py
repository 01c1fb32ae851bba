"""The tunnel endpoint for machines behind NAT (a real asyncssh server on loopback, a real SQLite
database, real SSH clients): a machine's own key forwards its own port and nothing else; shells,
execs, local forwards, other ports, other keys, passwords and unknown users are refused. The
command a machine runs, and the address policy's place for tunnelled machines."""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncssh
import pytest
from platform_database import open_engine
from platform_machines.address_policy import AddressPolicy, RefusedAddressError
from platform_machines.errors import InvalidMachineError
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.platform_key import load_or_create_key
from platform_machines.ssh_command import parse_ssh_command
from platform_machines.ssh_connections import SshDialer
from platform_machines.tunnel_endpoint import TunnelEndpoint
from platform_machines.tunnel_machines import MachinesBehindNat, TunnelEndpointAddress, TunnelEndpointOffError
from platform_machines.tunnel_state import CONNECTED, WAITING


@dataclass
class Tunnels:
    endpoint: TunnelEndpoint
    behind_nat: MachinesBehindNat
    host_key: str


@pytest.fixture
async def tunnels(tmp_path: Path) -> AsyncIterator[Tunnels]:
    key = load_or_create_key(tmp_path / "ssh" / "id_ed25519")
    host_key = load_or_create_key(tmp_path / "ssh" / "tunnel_host_ed25519_key")
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    store = MachineStore(engine)
    await store.create_tables()
    registry = MachineRegistry(store, SshDialer(key, AddressPolicy(), 3.0))
    holder: list[MachinesBehindNat] = []

    async def up(machine_id: str) -> None:
        await holder[0].tunnel_up(machine_id)

    async def down(machine_id: str) -> None:
        await holder[0].tunnel_down(machine_id)

    endpoint = TunnelEndpoint(store, host_key, "127.0.0.1", 0, 1.0, up, down)
    await endpoint.start()
    holder.append(MachinesBehindNat(registry, key, TunnelEndpointAddress("127.0.0.1", endpoint.port, host_key, 1.0)))
    yield Tunnels(endpoint, holder[0], host_key.public_line)
    await endpoint.stop()
    await engine.dispose()


def private_key(command: str) -> asyncssh.SSHKey:
    """The machine's tunnel key, as the command writes it."""
    found = re.search(r"printf '%s\\n' ('-----BEGIN OPENSSH PRIVATE KEY-----'.*?'-----END OPENSSH PRIVATE KEY-----')",
                      command)
    assert found, "the command writes no private key"
    return asyncssh.import_private_key("\n".join(shlex.split(found.group(1))) + "\n")


async def connect(tunnels: Tunnels, user: str, key: asyncssh.SSHKey) -> asyncssh.SSHClientConnection:
    return await asyncssh.connect(
        "127.0.0.1", tunnels.endpoint.port, username=user, client_keys=[key], config=None, agent_path=None,
        known_hosts=([asyncssh.import_public_key(tunnels.host_key)], [], []), password=None)


async def added(tunnels: Tunnels, name: str = "laptop") -> tuple[StoredMachine, asyncssh.SSHKey, str]:
    machine, command = await tunnels.behind_nat.add(name, "ubuntu", 22, "team-a")
    return machine, private_key(command), command


async def test_the_command_and_the_waiting_machine(tunnels: Tunnels) -> None:
    machine, key, command = await added(tunnels)
    assert machine.target.tunnel and machine.target.machine.host == "127.0.0.1"
    assert machine.status == "unchecked" and machine.tunnel_state == WAITING
    assert machine.status_reason.startswith("waiting for the machine to connect")
    port = machine.target.machine.port
    assert f"-R 127.0.0.1:{port}:localhost:22 " in command and "while true; do ssh -N " in command
    assert "-o ServerAliveInterval=1 " in command and "-o StrictHostKeyChecking=yes" in command
    assert f"[127.0.0.1]:{tunnels.endpoint.port} {' '.join(tunnels.host_key.split()[:2])}" in command
    stored = await tunnels.behind_nat.store.get(machine.id)
    assert stored.tunnel_key == key.export_public_key("openssh").decode().strip()
    assert "PRIVATE" not in repr(stored)  # only the public half is kept
    checked = await tunnels.behind_nat.registry.check(machine.id)
    assert checked.status == "unchecked" and checked.status_reason.startswith("waiting for the machine")


async def test_own_port_is_forwarded_on_loopback(tunnels: Tunnels) -> None:
    machine, key, _ = await added(tunnels)
    async with await connect(tunnels, machine.id, key) as conn:
        listener = await conn.forward_remote_port("127.0.0.1", machine.target.machine.port, "127.0.0.1", 9)
        assert listener.get_port() == machine.target.machine.port
        assert tunnels.endpoint.is_up(machine.id)
    await tunnels.endpoint.stop()  # waits for the events the closed tunnel raised
    stored = await tunnels.behind_nat.store.get(machine.id)
    assert stored.tunnel_state == "down" and stored.status == "unreachable"
    assert stored.status_reason.startswith("tunnel down since ")


async def test_a_session_exec_or_local_forward_is_refused(tunnels: Tunnels) -> None:
    machine, key, _ = await added(tunnels)
    async with await connect(tunnels, machine.id, key) as conn:
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.create_process(term_type="xterm")  # a shell
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.run("id")
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.open_connection("127.0.0.1", 22)  # ssh -L
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.start_sftp_client()


async def test_another_port_is_refused(tunnels: Tunnels) -> None:
    machine, key, _ = await added(tunnels)
    other, _, _ = await added(tunnels, "other")
    async with await connect(tunnels, machine.id, key) as conn:
        for port in (other.target.machine.port, machine.target.machine.port + 1, 0):
            with pytest.raises(asyncssh.ChannelListenError):
                await conn.forward_remote_port("127.0.0.1", port, "127.0.0.1", 9)
        assert not tunnels.endpoint.is_up(machine.id) and not tunnels.endpoint.is_up(other.id)


async def test_wrong_credentials_are_refused(tunnels: Tunnels) -> None:
    machine, _, _ = await added(tunnels)
    other, other_key, _ = await added(tunnels, "other")
    with pytest.raises(asyncssh.PermissionDenied):
        await connect(tunnels, machine.id, other_key)  # another machine's key
    with pytest.raises(asyncssh.PermissionDenied):
        await connect(tunnels, machine.id, asyncssh.generate_private_key("ssh-ed25519"))
    with pytest.raises(asyncssh.PermissionDenied):
        await connect(tunnels, "m-000000000000", other_key)  # an unknown user
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect("127.0.0.1", tunnels.endpoint.port, username=machine.id, password="guess",
                               client_keys=None, config=None, agent_path=None, known_hosts=None)
    assert (await tunnels.behind_nat.store.get(machine.id)).tunnel_state == WAITING
    assert (await tunnels.behind_nat.store.get(other.id)).tunnel_state != CONNECTED


async def test_bad_input_and_no_endpoint(tunnels: Tunnels) -> None:
    for name, user, port, field in (("", "ubuntu", 22, "name"), ("x" * 201, "ubuntu", 22, "name"),
                                    ("laptop", "-oProxyCommand=x", 22, "user"), ("laptop", "a b", 22, "user"),
                                    ("laptop", "ubuntu", 70000, "ssh_port")):
        with pytest.raises(InvalidMachineError) as refused:
            await tunnels.behind_nat.add(name, user, port, "team-a")
        assert refused.value.field == field
    off = MachinesBehindNat(tunnels.behind_nat.registry, tunnels.behind_nat.platform_key, None)
    with pytest.raises(TunnelEndpointOffError, match="PLATFORM_TUNNEL_PORT"):
        await off.add("laptop", "ubuntu", 22, "team-a")


async def test_a_pasted_loopback_command_is_still_refused(tunnels: Tunnels) -> None:
    machine, _, _ = await added(tunnels)
    dialer = tunnels.behind_nat.registry.dialer
    pasted = parse_ssh_command(f"ssh ubuntu@127.0.0.1 -p {machine.target.machine.port}")
    assert not pasted.tunnel
    with pytest.raises(RefusedAddressError):
        async with dialer.open_machine("pasted", pasted, {}):
            pass
    with pytest.raises(RefusedAddressError, match="loopback"):  # the tunnel's port pasted as a machine
        await tunnels.behind_nat.registry.add(f"ssh ubuntu@127.0.0.1 -p {machine.target.machine.port}", "", "team-a")
