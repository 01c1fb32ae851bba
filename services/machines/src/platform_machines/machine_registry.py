"""The machines' operations: add a pasted SSH command, check, accept a changed host key, remove.
Each connects through `SshDialer` and keeps what it found in the `MachineStore`.

Statuses: `ready` (the last check reached the machine), `unreachable` (with the reason), `host key
changed` (every connection refused until a person accepts the new key), `unchecked` (a machine
behind NAT whose tunnel never came up). A machine behind NAT is checked only while its tunnel is
up (tunnel_machines); otherwise its status says what the tunnel is doing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

from platform_machines.errors import HostKeyPendingError, InvalidMachineError, MachineError, MachineExistsError
from platform_machines.machine_facts import CHECK_COMMAND, MachineFacts, parse_check_output
from platform_machines.machine_store import MachineStore, StoredMachine, new_machine_id
from platform_machines.ssh_command import UnusableSshCommandError, parse_ssh_command
from platform_machines.ssh_connections import HostKeyChangedError, MachineUnreachableError, SshDialer
from platform_machines.tunnel_state import CONNECTED, WAITING, tunnel_summary

log = logging.getLogger(__name__)

READY = "ready"
UNREACHABLE = "unreachable"
HOST_KEY_CHANGED = "host key changed"
UNCHECKED = "unchecked"
CHECK_TIMEOUT_S = 30.0
MAX_NAME_LENGTH = 200


def facts_json(facts: MachineFacts) -> dict[str, object]:
    """The facts as stored (and as `MachineFacts` of simulusion.machines.v1 in JSON form)."""
    data = dataclasses.asdict(facts)
    data.pop("sections", None)
    return data


class MachineRegistry:
    """Adds, checks and removes machines; the one writer of the `machines` table."""

    def __init__(self, store: MachineStore, dialer: SshDialer) -> None:
        self.store = store
        self.dialer = dialer

    async def add(self, ssh_command: str, name: str, team: str) -> StoredMachine:
        """Parse, connect (pinning every hop's host key), check, store.

        Raises:
            InvalidMachineError: the command cannot be used, the address is refused, the machine
                cannot be reached or refuses the key (nothing is stored then).
            MachineExistsError: the team has that host and port already.
        """
        try:
            target = parse_ssh_command(ssh_command)
        except UnusableSshCommandError as exc:
            raise InvalidMachineError(str(exc), field="ssh") from None
        name = (name or target.machine.host).strip()
        if len(name) > MAX_NAME_LENGTH:
            raise InvalidMachineError(f"the name is {len(name)} characters; at most {MAX_NAME_LENGTH}", field="name")
        existing = await self.store.find(team, target.machine.host, target.machine.port)
        if existing is not None and not existing.target.tunnel:  # a tunnel's port: the address policy answers
            raise MachineExistsError(f"the machine at {target.machine.address} is added already as {existing.name!r} "
                                     f"({existing.id}): check it or remove it first", field="ssh")
        machine = StoredMachine(id=new_machine_id(), team=team, name=name, target=target, status=UNREACHABLE)
        facts, host_keys = await self._read_facts(machine)
        now = time.time()
        machine = dataclasses.replace(machine, status=READY, host_keys=host_keys, facts=facts_json(facts),
                                      checked_at=now, facts_at=now)
        stored = await self.store.add(machine)
        log.info("machine %s (%s) added for team %s: %d GPU(s)", stored.id, stored.target.machine, team,
                 len(facts.gpus))
        return stored

    async def check(self, machine_id: str) -> StoredMachine:
        """Connect and read the facts again; the status says how it went (never raises for an
        unreachable machine or a changed key: the machine's status tells)."""
        machine = await self.store.get(machine_id)
        now = time.time()
        if machine.target.tunnel and machine.tunnel_state != CONNECTED:
            return await self.mark_tunnel_unreachable(machine_id)
        try:
            facts, host_keys = await self._read_facts(machine)
        except HostKeyChangedError as exc:
            pending = {**machine.pending_host_keys, **exc.presented}
            machine = dataclasses.replace(machine, status=HOST_KEY_CHANGED, status_reason=str(exc),
                                          pending_host_keys=pending, checked_at=now)
        except MachineUnreachableError as exc:
            machine = dataclasses.replace(machine, status=UNREACHABLE, status_reason=str(exc), checked_at=now)
        except MachineError as exc:  # an address now refused by the operator's settings
            machine = dataclasses.replace(machine, status=UNREACHABLE, status_reason=str(exc), checked_at=now)
        else:
            machine = dataclasses.replace(
                machine, status=READY, status_reason="", host_keys={**machine.host_keys, **host_keys},
                pending_host_keys={}, facts=facts_json(facts), checked_at=now, facts_at=now)
        return await self.store.save(machine)

    async def mark_tunnel_unreachable(self, machine_id: str) -> StoredMachine:
        """A machine behind NAT whose tunnel is not up: its status says why (`unchecked` while waiting)."""
        machine = await self.store.get(machine_id)
        status = UNCHECKED if machine.tunnel_state == WAITING else UNREACHABLE
        machine = dataclasses.replace(machine, status=status, checked_at=time.time(),
                                      status_reason=tunnel_summary(machine.tunnel_state, machine.tunnel_since))
        return await self.store.save(machine)

    async def accept_host_key(self, machine_id: str) -> StoredMachine:
        """Pin the keys the machine's hops presented instead of their pinned ones, then check.

        Raises:
            HostKeyPendingError: no changed key waits (check the machine first).
        """
        machine = await self.store.get(machine_id)
        if not machine.pending_host_keys:
            raise HostKeyPendingError(f"machine {machine.name!r} ({machine.id}) has no changed host key to accept; "
                                      "its status is " + repr(machine.status))
        unreadable = [hop for hop, key in machine.pending_host_keys.items() if not key]
        host_keys = {**machine.host_keys, **machine.pending_host_keys}
        for hop in unreadable:  # the new key could not be read: the next connection pins what it finds
            host_keys.pop(hop, None)
        machine = dataclasses.replace(machine, host_keys=host_keys, pending_host_keys={})
        await self.store.save(machine)
        log.info("machine %s: new host key(s) accepted for %s", machine.id, ", ".join(machine.pending_host_keys)
                 or "its hops")
        return await self.check(machine_id)

    async def _read_facts(self, machine: StoredMachine) -> tuple[MachineFacts, dict[str, str]]:
        async with self.dialer.open_machine(machine.name, machine.target, machine.host_keys) as opened:
            try:
                result = await asyncio.wait_for(opened.connection.run(CHECK_COMMAND, check=False), CHECK_TIMEOUT_S)
            except (TimeoutError, asyncio.TimeoutError):
                raise MachineUnreachableError(
                    f"machine {machine.name!r} ({machine.target.machine}): the check did not finish in "
                    f"{CHECK_TIMEOUT_S:g} s") from None
            output = result.stdout if isinstance(result.stdout, str) else (result.stdout or b"").decode(errors="replace")
            return parse_check_output(output), opened.host_keys
