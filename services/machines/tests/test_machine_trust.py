"""Adding, checking and trusting machines against a real sshd (platform_testing.sshd) with a real
SQLite database: the platform's key, host keys pinned on first use, a changed key refused until
accepted, and each way a machine cannot be reached."""

from __future__ import annotations

import asyncio
import socket
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from platform_database import open_engine
from platform_machines.address_policy import AddressPolicy, RefusedAddressError, parse_networks
from platform_machines.errors import HostKeyPendingError, InvalidMachineError, MachineExistsError
from platform_machines.machine_registry import HOST_KEY_CHANGED, READY, UNREACHABLE, MachineRegistry
from platform_machines.machine_store import MachineStore
from platform_machines.platform_key import PlatformKey, load_or_create_key
from platform_machines.ssh_connections import HostKeyChangedError, MachineUnreachableError, SshDialer
from platform_testing.sshd import SshServer


@pytest.fixture
def platform_key(tmp_path: Path) -> PlatformKey:
    return load_or_create_key(tmp_path / "config" / "ssh" / "id_ed25519")


@pytest.fixture
async def registry(tmp_path: Path, platform_key: PlatformKey) -> AsyncIterator[MachineRegistry]:
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    store = MachineStore(engine)
    await store.create_tables()
    yield MachineRegistry(store, SshDialer(platform_key, AddressPolicy(parse_networks("127.0.0.0/8")), 3.0))
    await engine.dispose()


def test_the_platform_key_is_made_once_private_to_its_owner(tmp_path: Path, platform_key: PlatformKey) -> None:
    path = tmp_path / "config" / "ssh" / "id_ed25519"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert platform_key.public_line.startswith("ssh-ed25519 ") and platform_key.public_line.endswith(" simulusion-platform")
    assert (path.parent / "id_ed25519.pub").read_text().strip() == platform_key.public_line
    assert load_or_create_key(path).fingerprint == platform_key.fingerprint  # the same key, not a new one
    assert "PRIVATE" not in repr(platform_key)


async def test_added_machine_is_ready_with_two_gpus(sshd: SshServer, registry: MachineRegistry,
                                                   platform_key: PlatformKey) -> None:
    sshd.authorize(platform_key.authorized_keys_line)
    machine = await registry.add(f"$ {sshd.ssh_command} -i ~/.ssh/other -L 8080:localhost:8080", "box", "default")
    assert machine.status == READY
    assert [g["name"] for g in machine.facts["gpus"]] == ["NVIDIA H100 80GB HBM3"] * 2
    assert machine.facts["gpus"][1]["memory_total_mib"] is None  # "[N/A]"
    assert machine.facts["gpu_processes"][0]["pid"] == 4242
    assert machine.facts["cpus"] >= 1 and machine.facts["memory_total_bytes"] > 0
    assert machine.facts["python"].startswith("Python 3")
    assert machine.host_keys == {f"127.0.0.1:{sshd.port}": sshd.host_public_key()}
    assert (await registry.store.get(machine.id)).status == READY
    with pytest.raises(MachineExistsError, match=machine.id):
        await registry.add(sshd.ssh_command, "again", "default")


async def test_a_changed_host_key_refuses_until_accepted(sshd: SshServer, registry: MachineRegistry,
                                                         platform_key: PlatformKey) -> None:
    sshd.authorize(platform_key.authorized_keys_line)
    machine = await registry.add(sshd.ssh_command, "box", "default")
    old_key = sshd.host_public_key()
    sshd.change_host_key()
    checked = await registry.check(machine.id)
    assert checked.status == HOST_KEY_CHANGED
    assert "'box'" in checked.status_reason and "accept" in checked.status_reason
    assert checked.host_keys[f"127.0.0.1:{sshd.port}"] == old_key  # still pinned
    assert checked.pending_host_keys == {f"127.0.0.1:{sshd.port}": sshd.host_public_key()}
    with pytest.raises(HostKeyChangedError):  # every connection, not only checks
        async with registry.dialer.open_machine(checked.name, checked.target, checked.host_keys):
            pass
    accepted = await registry.accept_host_key(machine.id)
    assert accepted.status == READY and accepted.pending_host_keys == {}
    assert accepted.host_keys[f"127.0.0.1:{sshd.port}"] == sshd.host_public_key()
    with pytest.raises(HostKeyPendingError):
        await registry.accept_host_key(machine.id)


async def test_a_refused_key_says_which_line_to_add(sshd: SshServer, registry: MachineRegistry,
                                                    platform_key: PlatformKey) -> None:
    with pytest.raises(MachineUnreachableError) as caught:
        await registry.add(sshd.ssh_command, "box", "default")
    assert "key not authorized" in str(caught.value)
    assert platform_key.authorized_keys_line in str(caught.value)
    assert await registry.store.list() == []


async def test_a_closed_port_is_refused(registry: MachineRegistry) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(MachineUnreachableError, match=f"connection refused: nothing listens on port {port}"):
        await registry.add(f"ssh root@127.0.0.1 -p {port}", "gone", "default")


async def test_a_silent_port_times_out(registry: MachineRegistry) -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)  # accepts, never speaks SSH
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(MachineUnreachableError, match="timed out after 3 s"):
            await registry.add(f"ssh root@127.0.0.1 -p {port}", "silent", "default")


async def test_a_machine_gone_later_is_unreachable_not_an_error(sshd: SshServer, registry: MachineRegistry,
                                                                platform_key: PlatformKey) -> None:
    sshd.authorize(platform_key.authorized_keys_line)
    machine = await registry.add(sshd.ssh_command, "box", "default")
    sshd.stop()
    checked = await registry.check(machine.id)
    assert checked.status == UNREACHABLE and "connection refused" in checked.status_reason
    assert len(checked.facts["gpus"]) == 2  # the last facts found stay


async def test_metadata_and_unallowed_loopback_are_refused(tmp_path: Path, platform_key: PlatformKey) -> None:
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'strict.db'}")
    store = MachineStore(engine)
    await store.create_tables()
    strict = MachineRegistry(store, SshDialer(platform_key, AddressPolicy(), 3.0))
    for command, address in (("ssh root@169.254.169.254", "169.254.169.254"), ("ssh -p 2222 root@127.0.0.1", "127.0.0.1")):
        with pytest.raises(RefusedAddressError, match=address):
            await strict.add(command, "", "default")
    with pytest.raises(InvalidMachineError, match="--dry-run"):
        await strict.add("gcloud compute ssh my-vm", "", "default")
    await engine.dispose()
