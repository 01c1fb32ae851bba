"""The client wheel: the platform serves the SDK that matches it (docs/client-wheel.md)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from platform_gateway.client_wheel import ClientWheelError, client_wheel
from platform_gateway.errors import UnavailableError
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(prefix="/wheels", tags=["wheels"])


@router.get(
    "/platform-sdk",
    response_class=Response,
    responses={
        200: {"content": {"application/octet-stream": {}},
              "description": "the wheel `platform_sdk-<version>-py3-none-any.whl` (its name in Content-Disposition)"},
        503: {"model": ErrorPublic},
    },
)
async def platform_sdk_wheel() -> Response:
    """The client wheel of this platform's version: the session client and the agent interface
    (`platform_sdk`, with `platform_contracts` and the generated protobuf code), needing only
    numpy, gymnasium, httpx and protobuf; the environment-server side is its
    `server` extra. Built from the gateway's installation on the first request, then kept.

        curl -fsSOJ -H "Authorization: Bearer $PLATFORM_TOKEN" "$PLATFORM_URL/v0/wheels/platform-sdk"
    """
    try:
        wheel = await run_in_threadpool(client_wheel)
    except ClientWheelError as exc:
        raise UnavailableError(f"the client wheel cannot be built: {exc}") from None
    return Response(wheel.data, media_type="application/octet-stream", headers={
        "Content-Disposition": f'attachment; filename="{wheel.filename}"',
        "ETag": f'"{wheel.sha256}"',
    })
