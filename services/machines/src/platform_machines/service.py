"""The machines service: the platform's key, the `machines` table, the dialer and the NATS API;
with PLATFORM_TUNNEL_PORT, the tunnel endpoint for machines behind NAT."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from platform_database import open_engine
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_machines.address_policy import AddressPolicy, parse_networks
from platform_machines.config import Settings
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_store import MachineStore
from platform_machines.machines_api import MachinesApi
from platform_machines.platform_key import PlatformKey, load_or_create_key
from platform_machines.ssh_connections import SshDialer
from platform_machines.tunnel_setup import TunnelSettings, open_tunnels, tunnel_settings

log = logging.getLogger(__name__)


class MachinesService:
    """Built from settings by `open`; `start` serves, `stop` stops serving and closes the database."""

    def __init__(self, nc: Any, engine: AsyncEngine, key: PlatformKey, policy: AddressPolicy,
                 connect_timeout: float, tunnels: TunnelSettings | None = None) -> None:
        self.engine = engine
        self.key = key
        self.store = MachineStore(engine)
        self.dialer = SshDialer(key, policy, connect_timeout)
        self.registry = MachineRegistry(self.store, self.dialer)
        self.behind_nat, self.tunnel_endpoint = open_tunnels(self.registry, key, tunnels)
        self.api = MachinesApi(nc, self.registry, key, self.behind_nat)

    @classmethod
    async def open(cls, nc: Any, settings: Settings) -> MachinesService:
        """Raises ValueError (a bad setting), PlatformKeyError, DatabaseUrlError: each one line."""
        policy = AddressPolicy(parse_networks(settings.machines_allow_networks))
        key = await asyncio.to_thread(load_or_create_key, settings.ssh_key)
        tunnels = await asyncio.to_thread(tunnel_settings, settings)
        return cls(nc, open_engine(settings.database_url), key, policy, settings.machines_connect_timeout, tunnels)

    async def start(self) -> None:
        """Raises OSError when the tunnel endpoint cannot listen."""
        await self.store.create_tables()
        if self.tunnel_endpoint is not None:
            await self.behind_nat.all_down()
            await self.tunnel_endpoint.start()
        await self.api.start()
        log.info("machines service ready: the platform's key %s (%s)", self.key.fingerprint, self.key.path)

    async def stop(self) -> None:
        await self.api.stop()
        if self.tunnel_endpoint is not None:
            await self.tunnel_endpoint.stop()
        await self.engine.dispose()
