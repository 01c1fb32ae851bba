"""The catalog: which environments sessions can be made of, and a preview frame of each."""

from __future__ import annotations


from fastapi import APIRouter, Response

from platform_gateway.api.deps import BrokerDep, PreviewsDep
from platform_gateway.errors import NotFoundError
from platform_gateway.json_views import entry_to_json
from platform_gateway.schemas.envs import EnvPublic, EnvsPublic
from platform_gateway.schemas.sessions import ErrorPublic

PREVIEW_MAX_AGE = 86400  # seconds browsers may keep a preview

router = APIRouter(prefix="/envs", tags=["envs"])


@router.get("", response_model=EnvsPublic, responses={503: {"model": ErrorPublic}})
async def list_envs(broker: BrokerDep, previews: PreviewsDep) -> EnvsPublic:
    """The broker's catalog entries.

    Each entry has `preview`, the URL of one frame of it (JPEG), and `preview_cached`:
    whether that frame is made already (when not, the first request for it takes a few seconds).
    """
    entries = [EnvPublic.model_validate(entry_to_json(e, preview_cached=previews.cached(e)))
               for e in await broker.list_envs()]
    return EnvsPublic(data=entries, count=len(entries))


@router.get(
    "/{env_id}/preview",
    response_class=Response,
    responses={
        200: {"content": {"image/jpeg": {}}, "description": "one frame of the environment after `reset(seed=0)`"},
        **{code: {"model": ErrorPublic} for code in (404, 503, 504)},
    },
)
async def preview(env_id: str, broker: BrokerDep, previews: PreviewsDep) -> Response:
    """One frame of the environment as JPEG, after `reset(seed=0)`.

    Made once by a short unrecorded session, then served from the gateway's cache
    (`PLATFORM_CACHE_DIR`) until the catalog entry changes. 404 for an unknown id or for an
    environment that renders no frames; 503 when the preview could not be made (not cached:
    the next request tries again).
    """
    entries = await broker.list_envs()
    entry = next((e for e in entries if e.id == env_id), None)
    if entry is None:
        known = ", ".join(e.id for e in entries[:12]) + (f", ... ({len(entries)} in all)" if len(entries) > 12 else "")
        raise NotFoundError(f"unknown environment '{env_id}'; known: {known} (GET /v0/envs lists them)")
    data = await previews.get(entry)
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": f"max-age={PREVIEW_MAX_AGE}"})
