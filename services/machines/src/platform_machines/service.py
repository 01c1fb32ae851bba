"""The machines service: the platform's key, the `machines` table, the dialer and the NATS API;
with PLATFORM_TUNNEL_PORT, the tunnel endpoint for machines behind NAT."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from platform_bus.metrics_responder import MetricsResponder
from platform_database import open_engine
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_machines.address_policy import AddressPolicy, parse_networks
from platform_machines.config import Settings
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_removal import MachineRemoval
from platform_machines.machine_store import MachineStore
from platform_machines.experiment_files import ExperimentFiles
from platform_machines.experiment_follower import FollowSettings
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.experiments import Experiments
from platform_machines.experiments_api import ExperimentsApi
from platform_machines.folder_source import UploadPolicy
from platform_machines.machines_api import MachinesApi
from platform_machines.metrics import MachinesMetrics
from platform_machines.platform_key import PlatformKey, load_or_create_key
from platform_machines.queued_launches import QueuedLaunches
from platform_machines.ssh_connections import SshDialer
from platform_machines.tunnel_setup import TunnelSettings, open_tunnels, tunnel_settings

log = logging.getLogger(__name__)


class MachinesService:
    """Built from settings by `open`; `start` serves, `stop` stops serving and closes the database."""

    def __init__(self, nc: Any, engine: AsyncEngine, key: PlatformKey, policy: AddressPolicy,
                 connect_timeout: float, tunnels: TunnelSettings | None = None,
                 settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.engine = engine
        self.key = key
        self.store = MachineStore(engine)
        self.dialer = SshDialer(key, policy, connect_timeout, settings.machines_keepalive)
        self.registry = MachineRegistry(self.store, self.dialer)
        self.behind_nat, self.tunnel_endpoint = open_tunnels(self.registry, key, tunnels)
        self.experiment_store = ExperimentStore(engine)
        self.queued_launches = QueuedLaunches(engine, key)
        self.experiments = Experiments(self.experiment_store, self.store, self.dialer, follow_settings(settings),
                                       settings.experiments_cancel_grace, self._ended, self.queued_launches,
                                       UploadPolicy.from_settings(settings.experiments_upload_roots,
                                                                  settings.experiments_upload_max_mb))
        self.api = MachinesApi(nc, self.registry, key, self.behind_nat, MachineRemoval(self.store, self.experiments))
        self.files = ExperimentFiles(self.experiment_store, self.store, self.dialer)
        self.experiments_api = ExperimentsApi(nc, self.experiments, self.api, self.files)
        self.metrics = MachinesMetrics(self.store, self.experiment_store)
        self._metrics_responder = MetricsResponder(nc, self.metrics.service)

    @classmethod
    async def open(cls, nc: Any, settings: Settings) -> MachinesService:
        """Raises ValueError (a bad setting), PlatformKeyError, DatabaseUrlError: each one line."""
        policy = AddressPolicy(parse_networks(settings.machines_allow_networks))
        key = await asyncio.to_thread(load_or_create_key, settings.ssh_key)
        tunnels = await asyncio.to_thread(tunnel_settings, settings)
        return cls(nc, open_engine(settings.database_url), key, policy, settings.machines_connect_timeout, tunnels,
                   settings)

    async def start(self) -> None:
        """Raises OSError when the tunnel endpoint cannot listen."""
        await self.store.create_tables()
        await self.experiment_store.create_tables()
        await self.queued_launches.create_tables()
        if self.tunnel_endpoint is not None:
            await self.behind_nat.all_down()
            await self.tunnel_endpoint.start()
        await self.api.start()
        await self.experiments_api.start()
        await self._metrics_responder.start()
        await self.experiments.resume()
        log.info("machines service ready: the platform's key %s (%s)", self.key.fingerprint, self.key.path)

    async def stop(self) -> None:
        await self._metrics_responder.stop()
        await self.experiments_api.stop()
        await self.api.stop()
        if self.tunnel_endpoint is not None:
            await self.tunnel_endpoint.stop()
        await self.experiments.stop()  # the commands run on: the next start follows them again
        await self.files.close()
        await self.engine.dispose()

    async def _ended(self, experiment: StoredExperiment) -> None:
        try:
            await self.experiments_api.publish_ended(experiment)
        except Exception:  # NATS gone: the gateway revokes the token when it starts (it lists ended ones)
            log.exception("cannot say that experiment %s ended", experiment.id)


def follow_settings(settings: Settings) -> FollowSettings:
    """Raises ValueError for a PLATFORM_EXPERIMENTS_GATEWAY that is not host:port."""
    host, _, port = settings.experiments_gateway.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"PLATFORM_EXPERIMENTS_GATEWAY must be host:port, not {settings.experiments_gateway!r}")
    return FollowSettings(public_url=settings.public_url.rstrip("/"), gateway=(host.strip("[]"), int(port)),
                          poll_interval=settings.experiments_poll_interval,
                          lost_after=settings.experiments_lost_after, fail_fast=settings.experiments_fail_fast,
                          cancel_grace=settings.experiments_cancel_grace)
