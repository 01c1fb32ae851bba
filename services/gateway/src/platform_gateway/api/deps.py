"""Dependencies of the routes, as `Annotated` aliases."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from platform_gateway.broker import BrokerClient
from platform_gateway.env_commands import EnvCommands
from platform_gateway.errors import UnauthenticatedError
from platform_gateway.gateway import Gateway
from platform_gateway.previews import PreviewCache
from platform_gateway.recorder import RecorderClient
from platform_gateway.session_streams import SessionStreams
from platform_gateway.wad_uploads import WadUploads

_bearer = HTTPBearer(auto_error=False, description="the platform's API token (PLATFORM_API_TOKEN)")


def get_gateway(request: Request) -> Gateway:
    return request.app.state.gateway


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


BrokerDep = Annotated[BrokerClient, Depends(get_broker)]
RecorderDep = Annotated[RecorderClient, Depends(get_recorder)]
CommandsDep = Annotated[EnvCommands, Depends(get_commands)]
StreamsDep = Annotated[SessionStreams, Depends(get_streams)]
PreviewsDep = Annotated[PreviewCache, Depends(get_previews)]
WadsDep = Annotated[WadUploads, Depends(get_wads)]


def token_ok(expected: str | None, given: str | None) -> bool:
    """Whether `given` is the API token (always true when no token is configured)."""
    if not expected:
        return True
    return given is not None and secrets.compare_digest(given.encode(), expected.encode())


def require_token(
    gateway: GatewayDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """Check `Authorization: Bearer <token>` against PLATFORM_API_TOKEN.

    Only routes of a platform with a token depend on it (`api.main.api_router`), so the OpenAPI
    document declares the bearer scheme exactly when it is needed."""
    expected = gateway.settings.api_token
    if not expected:
        return
    if credentials is None:
        raise UnauthenticatedError(
            "this platform needs an API token: send the header `Authorization: Bearer <token>`"
        )
    if not token_ok(expected, credentials.credentials):
        raise UnauthenticatedError("the API token is not valid")


TokenDep = Depends(require_token)
