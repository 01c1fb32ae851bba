"""Dependencies of the routes, as `Annotated` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from platform_gateway.broker import BrokerClient
from platform_gateway.env_commands import EnvCommands
from platform_gateway.identity.authenticator import Identity
from platform_gateway.gateway import Gateway
from platform_gateway.machines import MachinesClient
from platform_gateway.previews import PreviewCache
from platform_gateway.recorder import RecorderClient
from platform_gateway.session_streams import SessionStreams
from platform_gateway.team_access import TeamAccess
from platform_gateway.wad_uploads import WadUploads

_bearer = HTTPBearer(auto_error=False, description="an API token (PLATFORM_API_TOKEN, or with PLATFORM_AUTH=token "
                     "one from /v0/tokens or PLATFORM_ADMIN_TOKEN)")


def get_gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


GatewayDep = Annotated[Gateway, Depends(get_gateway)]


def get_broker(gateway: GatewayDep) -> BrokerClient:
    return gateway.broker


def get_recorder(gateway: GatewayDep) -> RecorderClient:
    return gateway.recorder


def get_commands(gateway: GatewayDep) -> EnvCommands:
    return gateway.commands


def get_streams(gateway: GatewayDep) -> SessionStreams:
    return gateway.streams


def get_previews(gateway: GatewayDep) -> PreviewCache:
    return gateway.previews


def get_wads(gateway: GatewayDep) -> WadUploads:
    return gateway.wads


def get_machines(gateway: GatewayDep) -> MachinesClient:
    return gateway.machines


BrokerDep = Annotated[BrokerClient, Depends(get_broker)]
RecorderDep = Annotated[RecorderClient, Depends(get_recorder)]
CommandsDep = Annotated[EnvCommands, Depends(get_commands)]
StreamsDep = Annotated[SessionStreams, Depends(get_streams)]
PreviewsDep = Annotated[PreviewCache, Depends(get_previews)]
WadsDep = Annotated[WadUploads, Depends(get_wads)]
MachinesDep = Annotated[MachinesClient, Depends(get_machines)]


async def identify(
    request: Request, gateway: GatewayDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Identity:
    """Who the request is (`platform_gateway.identity.authenticator`, the one place that decides),
    kept on `request.state.identity`.

    Every /v0 route of a platform that needs a token depends on it (`api.main.api_router`), so
    the OpenAPI document declares the bearer scheme exactly when it is needed."""
    identity = await gateway.identity.identify(credentials.credentials if credentials else None)
    request.state.identity = identity
    return identity


async def current_identity(request: Request, gateway: GatewayDep) -> Identity:
    """The request's identity: the one `identify` found (a platform that needs a token), else the
    open platform's (no bearer scheme on the route, so the OpenAPI document stays as it is)."""
    found = getattr(request.state, "identity", None)
    return found if isinstance(found, Identity) else await gateway.identity.identify(None)


IdentityDep = Annotated[Identity, Depends(current_identity)]


async def guard_team(request: Request, gateway: GatewayDep, identity: IdentityDep) -> None:
    """Refuse, as missing, a path naming a resource of another team (`platform_gateway.team_access`,
    the one place that decides). Installed on every /v0 REST route of a managed platform."""
    await gateway.access.guard(request.path_params, identity)


def get_access(gateway: GatewayDep) -> TeamAccess:
    return gateway.access


TokenDep = Depends(identify)
TeamGuardDep = Depends(guard_team)
AccessDep = Annotated[TeamAccess, Depends(get_access)]
