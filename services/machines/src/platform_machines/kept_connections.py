"""SSH connections kept open a short while after their last use, one per machine, so many
short commands in a row (the pieces of one file read by byte range) share one connection
instead of dialling, exchanging keys and authenticating for each.

A connection idle for `idle_s` is closed; `idle_s` 0 keeps none (each use dials: the old way,
for comparison). A connection found broken is dropped by `forget`, and the next use dials
again. The key names the machine as it is dialled (its target and pinned keys): a machine
whose address or keys changed is dialled afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

import asyncssh

from platform_machines.machine_store import StoredMachine
from platform_machines.ssh_connections import MachineConnection, SshDialer

IDLE_S = 10.0


@dataclass
class _Kept:
    opened: AbstractAsyncContextManager[MachineConnection]
    connection: asyncssh.SSHClientConnection
    users: int = 0
    closer: asyncio.TimerHandle | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class KeptConnections:
    def __init__(self, dialer: SshDialer, idle_s: float = IDLE_S) -> None:
        self.dialer = dialer
        self.idle_s = idle_s
        self._kept: dict[str, _Kept] = {}
        self._dialling: dict[str, asyncio.Lock] = {}
        self.dials = 0  # connections opened, for tests and the benchmark

    @asynccontextmanager
    async def use(self, machine: StoredMachine) -> AsyncIterator[asyncssh.SSHClientConnection]:
        """An open connection to `machine`; raises what `SshDialer.open_machine` raises."""
        key = repr((machine.id, machine.target, sorted(machine.host_keys.items())))
        kept = await self._get(key, machine)
        kept.users += 1
        if kept.closer is not None:
            kept.closer.cancel()
            kept.closer = None
        try:
            yield kept.connection
        finally:
            kept.users -= 1
            if kept.users == 0:
                if self.idle_s <= 0 or self._kept.get(key) is not kept:
                    await self._close(key, kept)
                else:
                    kept.closer = asyncio.get_running_loop().call_later(self.idle_s, self._close_later, key, kept)

    def forget(self, machine: StoredMachine) -> None:
        """Dial `machine` afresh next time (its connection broke); the broken one is closed by its
        last user."""
        key = repr((machine.id, machine.target, sorted(machine.host_keys.items())))
        self._kept.pop(key, None)

    async def close(self) -> None:
        for key, kept in list(self._kept.items()):
            await self._close(key, kept)

    async def _get(self, key: str, machine: StoredMachine) -> _Kept:
        async with self._dialling.setdefault(key, asyncio.Lock()):
            kept = self._kept.get(key)
            if kept is not None and not kept.connection.is_closed():
                return kept
            if kept is not None:  # closed under it (the link dropped): its last user closes it
                del self._kept[key]
                if kept.users == 0:
                    await self._close(key, kept)
            opened = self.dialer.open_machine(machine.name, machine.target, machine.host_keys)
            connection = (await opened.__aenter__()).connection
            self.dials += 1
            kept = self._kept[key] = _Kept(opened, connection)
            return kept

    def _close_later(self, key: str, kept: _Kept) -> None:
        task = asyncio.ensure_future(self._close(key, kept))
        kept.tasks.add(task)
        task.add_done_callback(kept.tasks.discard)

    async def _close(self, key: str, kept: _Kept) -> None:
        if kept.closer is not None:
            kept.closer.cancel()
            kept.closer = None
        if self._kept.get(key) is kept:
            del self._kept[key]
        with contextlib.suppress(Exception):
            await kept.opened.__aexit__(None, None, None)
