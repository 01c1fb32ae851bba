"""Everything the routes use, built once from the settings and a NATS connection."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from nats.aio.client import Client as NATS

from platform_gateway.broker import BrokerClient
from platform_gateway.config import Settings
from platform_gateway.env_commands import EnvCommands
from platform_gateway.previews import PreviewCache
from platform_gateway.recorder import RecorderClient
from platform_gateway.session_directory import SessionDirectory
from platform_gateway.session_streams import SessionStreams
from platform_gateway.step_tickets import StepTickets
from platform_gateway.wad_uploads import WadUploads


@dataclass
class Gateway:
    settings: Settings
    nc: NATS
    broker: BrokerClient
    recorder: RecorderClient
    streams: SessionStreams
    commands: EnvCommands
    previews: PreviewCache
    tickets: StepTickets
    wads: WadUploads
    _sweeper: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    @classmethod
    def build(cls, settings: Settings, nc: NATS) -> Gateway:
        broker = BrokerClient(nc, timeout=settings.request_timeout, create_timeout=settings.create_timeout)
        tickets = StepTickets(settings.ticket_secret, direct_steps=settings.direct_steps)
        streams = SessionStreams(SessionDirectory(broker), timeout=settings.env_timeout, tickets=tickets)
        commands = EnvCommands(streams)
        return cls(
            settings=settings,
            nc=nc,
            broker=broker,
            recorder=RecorderClient(nc, timeout=settings.request_timeout),
            streams=streams,
            commands=commands,
            previews=PreviewCache(settings.cache_dir, broker, commands),
            tickets=tickets,
            wads=WadUploads(),
        )

    def start(self) -> None:
        """Start the background work (closing unused streams)."""
        self._sweeper = asyncio.create_task(self.streams.sweep_forever(self.settings.stream_idle_timeout))

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self.streams.close()
