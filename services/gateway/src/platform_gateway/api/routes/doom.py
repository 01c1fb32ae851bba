"""Doom: uploaded WADs, whose maps any Doom environment plays (docs/doom.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from platform_contracts import names
from platform_contracts.limits import MAX_WAD_BYTES
from platform_gateway.api.deps import AccessDep, IdentityDep, WadsDep
from platform_gateway.errors import InvalidArgumentError
from platform_gateway.schemas.doom import WadListPublic, WadPublic
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(prefix="/doom", tags=["doom"])


@router.post(
    "/wads",
    status_code=201,
    response_model=WadPublic,
    openapi_extra={"requestBody": {"required": True, "content": {"application/octet-stream": {
        "schema": {"type": "string", "format": "binary", "maxLength": MAX_WAD_BYTES}}}}},
    responses={200: {"model": WadPublic, "description": "the same file was uploaded before: its first record"},
               413: {"model": ErrorPublic, "description": "over 20 MB"},
               422: {"model": ErrorPublic, "description": "a bad name, or not a whole WAD with at least one map"}},
)
async def upload_wad(
    request: Request,
    response: Response,
    wads: WadsDep,
    access: AccessDep,
    identity: IdentityDep,
    name: Annotated[str, Query(description=f"the file's name, e.g. memory_test.wad: {names.WAD_NAME_RULE}",
                               # checked by wad_uploads.check_name, whose messages say more (a path, ...)
                               json_schema_extra={"pattern": names.WAD_NAME_PATTERN})],
) -> WadPublic:
    """Upload a WAD (at most 20 MB) as the request body (`application/octet-stream`). It is
    read as it arrives, never more than the limit, checked (the header, the lump directory
    inside the file, at least one map: an empty marker lump followed by THINGS or TEXTMAP)
    and kept under PLATFORM_WADS; the answer gives its id and maps.

        curl -fsS -X POST --data-binary @memory_test.wad -H 'Content-Type: application/octet-stream' \\
             "$PLATFORM_URL/v0/doom/wads?name=memory_test.wad"
    """
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise InvalidArgumentError(f"Content-Length {declared!r} is not a number of bytes")
    size = int(declared) if declared is not None else None
    record, created = await wads.upload(name, request.stream(), size, access.team_of(identity))
    if not created:
        response.status_code = 200
    return WadPublic.of(record)


@router.get("/wads", response_model=WadListPublic)
async def list_wads(wads: WadsDep, access: AccessDep, identity: IdentityDep) -> WadListPublic:
    """Every WAD your team uploaded, oldest first."""
    return WadListPublic(wads=[WadPublic.of(record) for record in await wads.records(access.list_filter(identity))])


@router.get("/wads/{wad_id}", response_model=WadPublic, responses={404: {"model": ErrorPublic}})
async def get_wad(wad_id: str, wads: WadsDep, access: AccessDep, identity: IdentityDep) -> WadPublic:
    """One uploaded WAD: its name, size and maps."""
    return WadPublic.of(await wads.get(wad_id, access.list_filter(identity)))
