"""Training runs: scalars against a step axis, with hyperparameters, tags and the sessions,
recordings and experiment they used (`platform_gateway.run_store`; docs/training.md, "The API").

With PLATFORM_MODE=managed a run belongs to its creator's team: another team's run answers 404
as a missing one does, and listings hold the caller's team's only.
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response, status

from platform_gateway.api.deps import AccessDep, GatewayDep, IdentityDep
from platform_gateway.errors import ConflictError, InvalidArgumentError, NotFoundError
from platform_gateway.run_store import Point, RunIdTakenError, RunStore
from platform_gateway.schemas.runs import (
    METRIC_NAMES_PATTERN,
    RUN_ID_PATTERN,
    TEXT_PATTERN,
    MetricPointsIn,
    MetricsAccepted,
    RunCreate,
    RunMetricsPublic,
    RunPublic,
    RunsPublic,
    RunUpdate,
    SeriesPublic,
)
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(
    prefix="/runs", tags=["runs"],
    responses={code: {"model": ErrorPublic} for code in (404, 422, 503)},
)

RunId = Annotated[str, Path(pattern=RUN_ID_PATTERN, description="a run's id: 'run-' and 1-64 of [A-Za-z0-9_-]")]
MAX_LISTED = 1000
MAX_SERIES_POINTS = 1_000_000


async def get_runs(gateway: GatewayDep) -> RunStore:
    return await gateway.runs.open()


RunsDep = Annotated[RunStore, Depends(get_runs)]


def unknown_run(run_id: str) -> NotFoundError:
    return NotFoundError(f"run '{run_id}' not found (GET /v0/runs lists yours)", field="run_id")


@router.post("", response_model=RunPublic, status_code=status.HTTP_201_CREATED,
             responses={200: {"model": RunPublic, "description": "a run of that `id` is yours already: what the body "
                                                                 "gives is merged into it"},
                        409: {"model": ErrorPublic, "description": "the `id` is taken by another team's run"}})
async def create_run(body: RunCreate, response: Response, runs: RunsDep, access: AccessDep,
                     identity: IdentityDep) -> RunPublic:
    """Start a run. With an `id` of a run of yours, answers it (200) with the body merged in (tags,
    session and recording ids unioned, hparams updated): a client's retry is idempotent."""
    run_id = body.id or f"run-{uuid.uuid4().hex}"
    try:
        run, made = await runs.create(run_id, access.team_of(identity), name=body.name, group=body.group,
                                      seed=body.seed, tags=body.tags, hparams=body.hparams,
                                      experiment_id=body.experiment_id, session_ids=body.session_ids,
                                      recording_ids=body.recording_ids)
    except RunIdTakenError:
        raise ConflictError(f"the run id '{run_id}' is taken: choose another (or leave `id` out)", field="id") from None
    if not made:
        response.status_code = status.HTTP_200_OK
    return RunPublic.of(run)


@router.get("", response_model=RunsPublic)
async def list_runs(runs: RunsDep, access: AccessDep, identity: IdentityDep,
                    experiment_id: Annotated[str | None, Query(min_length=1, max_length=200, pattern=TEXT_PATTERN)] = None,
                    group: Annotated[str | None, Query(min_length=1, max_length=128, pattern=TEXT_PATTERN)] = None,
                    tag: Annotated[str | None, Query(min_length=1, max_length=64, pattern=TEXT_PATTERN)] = None,
                    limit: Annotated[int, Query(ge=1, le=MAX_LISTED)] = 200) -> RunsPublic:
    """Your runs, newest first: of one experiment, group or tag when asked, at most `limit`."""
    found = await runs.list(access.list_filter(identity), experiment_id=experiment_id, group=group, tag=tag,
                            limit=limit)
    return RunsPublic(data=[RunPublic.of(run) for run in found])


@router.get("/{run_id}", response_model=RunPublic)
async def get_run(run_id: RunId, runs: RunsDep, access: AccessDep, identity: IdentityDep) -> RunPublic:
    """One run, with each of its series' final value."""
    run = await runs.get(run_id, access.list_filter(identity))
    if run is None:
        raise unknown_run(run_id)
    return RunPublic.of(run)


@router.patch("/{run_id}", response_model=RunPublic)
async def update_run(run_id: RunId, body: RunUpdate, runs: RunsDep, access: AccessDep,
                     identity: IdentityDep) -> RunPublic:
    """Change a run's state, or add to its tags, hparams, sessions, recordings or summary (lists
    unioned, dicts merged)."""
    run = await runs.update(run_id, access.list_filter(identity), state=body.state, tags=body.tags,
                            hparams=body.hparams, session_ids=body.session_ids, recording_ids=body.recording_ids,
                            summary=body.summary)
    if run is None:
        raise unknown_run(run_id)
    return RunPublic.of(run)


@router.delete("/{run_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response)
async def delete_run(run_id: RunId, runs: RunsDep, access: AccessDep, identity: IdentityDep) -> Response:
    """Remove a run and its metrics."""
    if not await runs.delete(run_id, access.list_filter(identity)):
        raise unknown_run(run_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{run_id}/metrics", response_model=MetricsAccepted)
async def log_metrics(run_id: RunId, body: MetricPointsIn, runs: RunsDep, access: AccessDep,
                      identity: IdentityDep) -> MetricsAccepted:
    """Write up to 5000 points. A point is keyed by (run, name, step): sending it again replaces it,
    so a retry after a lost answer never duplicates."""
    now = time.time()
    points = []
    for i, p in enumerate(body.points):
        if not math.isfinite(p.value):
            raise InvalidArgumentError(
                f"points[{i}] ({p.name!r} at step {p.step}) has the value {p.value}: send finite numbers only "
                "(leave a point out rather than sending NaN or infinity)", field=f"points.{i}.value")
        points.append(Point(p.name, p.step, p.value, now if p.time is None else p.time, p.frames))
    accepted = await runs.add_points(run_id, access.list_filter(identity), points)
    if accepted is None:
        raise unknown_run(run_id)
    return MetricsAccepted(accepted=accepted)


@router.get("/{run_id}/metrics", response_model=RunMetricsPublic)
async def read_metrics(run_id: RunId, runs: RunsDep, access: AccessDep, identity: IdentityDep,
                       names: Annotated[str | None, Query(
                           max_length=20_000, pattern=METRIC_NAMES_PATTERN,
                           description="metric names separated by commas; default: every series")] = None,
                       max_points: Annotated[int, Query(
                           ge=2, le=MAX_SERIES_POINTS,
                           description="at most this many points per series, thinned evenly keeping the first and "
                                       "last")] = 10_000) -> RunMetricsPublic:
    """The run's series by name, each sorted by step."""
    wanted = None if names is None else [name for name in names.split(",") if name]
    if not await runs.exists(run_id, access.list_filter(identity)):
        raise unknown_run(run_id)
    found = await runs.series(run_id, wanted, max_points)
    return RunMetricsPublic(run_id=run_id, series={name: SeriesPublic.of(s) for name, s in found.items()})
