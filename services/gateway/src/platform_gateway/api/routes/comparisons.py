"""Comparisons of agents (`python -m platform_sdk.agents.compare` stores them), kept by the recorder."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Path, status
from platform_contracts import limits
from platform_contracts.recorder_json import message_to_json

from platform_gateway.api.deps import AccessDep, IdentityDep, RecorderDep
from platform_gateway.errors import GatewayError
from platform_gateway.schemas.comparisons import (
    ComparisonCreate,
    ComparisonPublic,
    ComparisonsPublic,
    ComparisonSummaryPublic,
)
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(
    prefix="/comparisons", tags=["comparisons"],
    responses={code: {"model": ErrorPublic} for code in (404, 422, 503)},
)

ComparisonId = Annotated[str, Path(
    min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, description='a comparison\'s id: "cmp-" and 12 hex digits',
)]


class ComparisonTooLargeError(GatewayError):
    status = 413
    code = "invalid_argument"


@router.post("", response_model=ComparisonPublic, status_code=status.HTTP_201_CREATED,
             responses={413: {"model": ErrorPublic, "description": "larger than the most the recorder stores"}})
async def create_comparison(body: ComparisonCreate, recorder: RecorderDep, access: AccessDep,
                            identity: IdentityDep) -> ComparisonPublic:
    """Store a comparison (the document without `id` and `created`, which the recorder sets; members
    not named here are kept); answers the stored document."""
    document = body.model_dump(exclude_unset=True)
    document["team"] = access.team_of(identity)  # the caller's, whatever the body says
    size = len(json.dumps(document, separators=(",", ":")))
    if size > limits.MAX_COMPARISON_BYTES:
        raise ComparisonTooLargeError(
            f"the comparison is {size} bytes; the most stored is {limits.MAX_COMPARISON_BYTES} bytes: keep fewer "
            "reward windows (a larger --window) or fewer agents")
    return ComparisonPublic.model_validate(await recorder.save_comparison(document))


@router.get("", response_model=ComparisonsPublic)
async def list_comparisons(recorder: RecorderDep, access: AccessDep, identity: IdentityDep) -> ComparisonsPublic:
    """Every stored comparison's summary (your team's), newest first."""
    found = [ComparisonSummaryPublic.model_validate(message_to_json(c)) for c in await recorder.list_comparisons()]
    return ComparisonsPublic(comparisons=access.visible(identity, found, lambda c: c.team))


@router.get("/{comparison_id}", response_model=ComparisonPublic)
async def get_comparison(comparison_id: ComparisonId, recorder: RecorderDep) -> ComparisonPublic:
    """One comparison: the environment, its timeline, and each agent's measures, reward windows and recording."""
    return ComparisonPublic.model_validate(await recorder.get_comparison(comparison_id))
