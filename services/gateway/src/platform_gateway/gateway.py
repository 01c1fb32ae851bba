"""Everything the routes use, built once from the settings and a NATS connection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from nats.aio.client import Client as NATS
from platform_database import open_engine

from platform_gateway.broker import BrokerClient
from platform_gateway.config import Settings
from platform_gateway.env_commands import EnvCommands
from platform_gateway.identity.authenticator import Authenticator
from platform_gateway.identity.oidc import OidcVerifier, parse_role_map
from platform_gateway.identity.tokens import TokenStore
from platform_gateway.evals import EvalsClient
from platform_gateway.experiments import ExperimentsClient, ExperimentTokens
from platform_gateway.machines import MachinesClient
from platform_gateway.metrics import GatewayMetrics
from platform_gateway.page_sessions import PageSessions
from platform_gateway.preview_warmer import PreviewWarmer, warmed_ids
from platform_gateway.previews import PreviewCache
from platform_gateway.recorder import RecorderClient
from platform_gateway.run_store import RunDirectory
from platform_gateway.session_directory import SessionDirectory
from platform_gateway.session_streams import SessionStreams
from platform_gateway.step_tickets import StepTickets
from platform_gateway.identity.team_directory import TeamDirectory
from platform_gateway.team_access import TeamAccess
from platform_gateway.wad_uploads import WadUploads


@dataclass
class Gateway:
    settings: Settings
    nc: NATS
    broker: BrokerClient
    recorder: RecorderClient
    machines: MachinesClient
    experiments: ExperimentsClient
    experiment_tokens: ExperimentTokens
    evals: EvalsClient
    streams: SessionStreams
    commands: EnvCommands
    previews: PreviewCache
    warmer: PreviewWarmer
    tickets: StepTickets
    wads: WadUploads
    identity: Authenticator
    access: TeamAccess
    pages: PageSessions
    runs: RunDirectory
    metrics: GatewayMetrics = field(default_factory=GatewayMetrics)
    _sweeper: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    @classmethod
    def build(cls, settings: Settings, nc: NATS) -> Gateway:
        broker = BrokerClient(nc, timeout=settings.request_timeout, create_timeout=settings.create_timeout)
        tickets = StepTickets(settings.ticket_secret, direct_steps=settings.direct_steps)
        streams = SessionStreams(SessionDirectory(broker), timeout=settings.env_timeout, tickets=tickets)
        commands = EnvCommands(streams)
        recorder = RecorderClient(nc, timeout=settings.request_timeout)
        wads = WadUploads()
        machines = MachinesClient(nc, timeout=settings.request_timeout)
        previews = PreviewCache(settings.cache_dir, broker, commands)
        experiments = ExperimentsClient(nc, timeout=settings.request_timeout)
        identity = _authenticator(settings)
        evals = EvalsClient(nc, timeout=settings.request_timeout)
        return cls(
            settings=settings,
            nc=nc,
            broker=broker,
            recorder=recorder,
            machines=machines,
            experiments=experiments,
            experiment_tokens=ExperimentTokens(nc, identity, experiments),
            evals=evals,
            streams=streams,
            commands=commands,
            previews=previews,
            warmer=PreviewWarmer(previews, broker, warmed_ids(settings.warm_previews)),
            tickets=tickets,
            wads=wads,
            identity=identity,
            access=TeamAccess(settings.mode == "managed", broker, recorder, wads, machines, experiments, evals),
            pages=PageSessions(_closer(broker, streams), settings.page_session_grace_s,
                               settings.page_left_grace_s),
            runs=RunDirectory(settings.database_url, identity.tokens.engine if identity.tokens is not None else None),
        )

    async def start(self) -> None:
        """Make the API tokens', teams' and members' tables (PLATFORM_AUTH=token or oidc; else
        the teams' and members' on first use), then start the background work (closing unused
        streams, making previews ahead).

        Raises:
            DatabaseUnavailableError: the tokens' database cannot be opened (one line naming it).
        """
        if self.identity.tokens is not None:
            await self.identity.tokens.create_tables()
            if self.identity.directory is not None:
                await self.identity.directory.open()
        self.metrics.service.nc = self.nc
        await self.experiment_tokens.start()
        self._sweeper = asyncio.create_task(self.streams.sweep_forever(self.settings.stream_idle_timeout))
        self.warmer.start()

    async def close(self) -> None:
        await self.experiment_tokens.stop()
        self.pages.close_all_timers()
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self.warmer.stop()
        await self.streams.close()
        if self.identity.directory is not None:
            await self.identity.directory.close()
        await self.runs.close()
        if self.identity.tokens is not None:
            await self.identity.tokens.engine.dispose()


def _closer(broker: BrokerClient, streams: SessionStreams) -> Callable[[str, str], Awaitable[object]]:
    """How PageSessions closes a session its page left: at the broker, then its streams."""

    async def close(session_id: str, reason: str) -> object:
        streams.drop(session_id)  # a request in flight is not waited for (see the close route)
        info = await broker.close_session(session_id, reason)
        streams.forget(session_id)
        return info

    return close


def _authenticator(settings: Settings) -> Authenticator:
    admin = settings.admin_token.get_secret_value() if settings.admin_token else None
    tokens = TokenStore(open_engine(settings.database_url)) if settings.auth in ("token", "oidc") else None
    oidc = None
    if settings.auth == "oidc":
        oidc = OidcVerifier(settings.oidc_issuer, settings.oidc_audience or settings.oidc_client_id,
                            parse_role_map(settings.oidc_role_map))
    directory = TeamDirectory(settings.database_url, tokens.engine if tokens is not None else None)
    return Authenticator(settings.auth, settings.api_token, admin or None, tokens, oidc, directory,
                         managed=settings.mode == "managed")
