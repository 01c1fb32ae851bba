"""The catalog: which environments sessions can be made of."""

from __future__ import annotations

from fastapi import APIRouter

from platform_gateway.api.deps import BrokerDep, TokenDep
from platform_gateway.json_views import entry_to_json
from platform_gateway.schemas.envs import EnvsPublic

router = APIRouter(prefix="/envs", tags=["envs"], dependencies=[TokenDep])


@router.get("", response_model=EnvsPublic)
async def list_envs(broker: BrokerDep) -> dict:
    """The broker's catalog entries."""
    entries = [entry_to_json(e) for e in await broker.list_envs()]
    return {"data": entries, "count": len(entries)}
