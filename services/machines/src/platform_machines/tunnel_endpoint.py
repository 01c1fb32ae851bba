"""The platform's own SSH endpoint for machines behind NAT (asyncssh server, PLATFORM_TUNNEL_PORT).

A machine logs in as its machine id with its tunnel key (the public half is in the `machines`
table) and may do one thing: ask for the remote forward of the one loopback port assigned to it
(`ssh -R 127.0.0.1:<port>:localhost:22`). The endpoint then listens on 127.0.0.1:<port> on the
platform's side, whatever bind address the client named, and carries each connection made there
back to the machine's sshd. Refused: passwords and keyboard-interactive, any other key or user,
sessions (shell, exec, subsystems such as sftp), local forwards (`-L`, direct-tcpip), UNIX socket
forwards, agent and X11 forwarding, and a remote forward of any other port.

A machine that connects again while its old connection lingers (a dropped link not yet noticed)
takes the port over: the old connection is closed first. Keepalives every PLATFORM_TUNNEL_KEEPALIVE
seconds end a tunnel whose link is gone after three unanswered ones; `on_up(machine_id)` and
`on_down(machine_id)` tell the owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import asyncssh

from platform_machines.errors import MachineNotFoundError
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.platform_key import PlatformKey

log = logging.getLogger(__name__)

KEEPALIVE_COUNT = 3
LOGIN_TIMEOUT_S = 30.0
LOOPBACK = "127.0.0.1"

TunnelEvent = Callable[[str], Coroutine[Any, Any, None]]


class TunnelEndpoint:
    """Serves tunnels on `listen:port` with `host_key`; `start`, `stop`, `is_up(machine_id)`."""

    def __init__(self, store: MachineStore, host_key: PlatformKey, listen: str, port: int, keepalive: float,
                 on_up: TunnelEvent, on_down: TunnelEvent) -> None:
        self.store = store
        self.host_key = host_key
        self.listen = listen
        self.port = port
        self.keepalive = keepalive
        self._on_up = on_up
        self._on_down = on_down
        self._active: dict[str, _TunnelServer] = {}  # machine id -> the connection holding its port
        self._server: asyncssh.SSHAcceptor | None = None
        self._events: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Raises OSError when the address cannot be listened on."""
        self._server = await asyncssh.create_server(
            lambda: _TunnelServer(self), self.listen, self.port, server_host_keys=[self.host_key.private],
            keepalive_interval=self.keepalive, keepalive_count_max=KEEPALIVE_COUNT, login_timeout=LOGIN_TIMEOUT_S,
            agent_forwarding=False, x11_forwarding=False, allow_scp=False, sftp_factory=None, config=None,
            server_version="SimulusionTunnel")
        if self.port == 0:
            self.port = self._server.get_port()
        log.info("tunnel endpoint for machines behind NAT on %s:%d (host key %s)", self.listen, self.port,
                 self.host_key.fingerprint)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        servers = list(self._active.values())
        for server in servers:
            server.close()
        for server in servers:  # each one's connection_lost records its tunnel as down
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                await asyncio.wait_for(server.wait_closed(), 5.0)
        if self._events:
            await asyncio.wait(self._events, timeout=5.0)

    def is_up(self, machine_id: str) -> bool:
        return machine_id in self._active

    async def tunnelled(self, machine_id: str) -> StoredMachine | None:
        """The machine behind NAT with that id, or None."""
        try:
            machine = await self.store.get(machine_id)
        except MachineNotFoundError:
            return None
        return machine if machine.tunnel_key else None

    async def forward(self, server: _TunnelServer, machine: StoredMachine, listen_host: str,
                      listen_port: int) -> asyncssh.SSHListener | None:
        """Listen on the machine's loopback port for `server` (taking it over from an older tunnel)."""
        older = self._active.get(machine.id)
        if older is not None and older is not server:
            log.info("machine %s: a new tunnel replaces the old one", machine.id)
            older.close()
            await older.wait_closed()
        assert server.conn is not None
        try:
            listener = await server.conn.forward_local_port(LOOPBACK, machine.target.machine.port, listen_host, listen_port)
        except OSError as exc:
            log.warning("machine %s: cannot listen on %s:%d for its tunnel: %s", machine.id, LOOPBACK,
                        machine.target.machine.port, exc)
            return None
        self._active[machine.id] = server
        log.info("machine %s: tunnel up (loopback port %d)", machine.id, machine.target.machine.port)
        self._event(self._on_up, machine.id)
        return listener

    def lost(self, server: _TunnelServer, machine_id: str) -> None:
        if self._active.get(machine_id) is server:
            del self._active[machine_id]
            log.info("machine %s: tunnel down", machine_id)
            self._event(self._on_down, machine_id)

    def _event(self, handler: TunnelEvent, machine_id: str) -> None:
        task = asyncio.create_task(handler(machine_id), name=f"tunnel event {machine_id}")
        self._events.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._events.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("tunnel event failed", exc_info=task.exception())


class _TunnelServer(asyncssh.SSHServer):
    """One client connection: authenticated as one machine, allowed its one remote forward."""

    def __init__(self, endpoint: TunnelEndpoint) -> None:
        self.endpoint = endpoint
        self.conn: asyncssh.SSHServerConnection | None = None
        self.machine: StoredMachine | None = None
        self._closed = asyncio.Event()

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed.set()
        if self.machine is not None:
            self.endpoint.lost(self, self.machine.id)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def begin_auth(self, username: str) -> bool:
        self._candidate = await self.endpoint.tunnelled(username)
        return True  # an unknown user is refused like a wrong key: nothing tells them apart

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        candidate = getattr(self, "_candidate", None)
        if candidate is None or candidate.id != username:
            return False
        if asyncssh.import_public_key(candidate.tunnel_key).public_data != key.public_data:
            return False
        self.machine = candidate
        return True

    def session_requested(self) -> bool:
        self._refuse("a session (shell, exec or subsystem)")
        return False

    def connection_requested(self, dest_host: str, dest_port: int, orig_host: str, orig_port: int) -> bool:
        self._refuse(f"a local forward to {dest_host}:{dest_port}")
        return False

    def unix_connection_requested(self, dest_path: str) -> bool:
        self._refuse("a UNIX socket forward")
        return False

    def unix_server_requested(self, listen_path: str) -> bool:
        self._refuse("a UNIX socket listener")
        return False

    def server_requested(self, listen_host: str, listen_port: int) -> Any:
        machine = self.machine
        if machine is None:
            return False
        if listen_port != machine.target.machine.port:
            self._refuse(f"a remote forward of port {listen_port} (its port is {machine.target.machine.port})")
            return False
        return self.endpoint.forward(self, machine, listen_host, listen_port)

    def _refuse(self, what: str) -> None:
        who = self.machine.id if self.machine is not None else "an unauthenticated client"
        log.warning("tunnel endpoint: machine %s asked for %s: refused", who, what)
