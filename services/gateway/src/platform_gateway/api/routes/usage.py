"""Usage: instance-hours per UTC day, team and environment, from the broker's session table
(`platform_broker.usage`), and GPU-hours of experiments per UTC day, team and machine, from the
machines service (`platform_machines.experiment_usage`), as JSON or CSV. The platform's operator
sees every team's (for invoicing), a team's admins and members their own team's.

When the machines service does not answer, the JSON still has the instance-hours, with
`gpu_hours_error` saying why the GPU-hours are missing; the CSV is a 503 then (a file must be
whole: GPU rows left out would read as no GPU-hours)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from platform_gateway.api.deps import BrokerDep, GatewayDep, IdentityDep
from platform_gateway.api.routes.teams import check_visible, month_days
from platform_gateway.errors import InvalidArgumentError, UnavailableError
from platform_gateway.schemas.sessions import ErrorPublic
from platform_gateway.schemas.teams import GpuUsageRowPublic, UsagePublic, UsageRowPublic
from platform_gateway.schemas.tokens import TEAM_PATTERN

router = APIRouter(prefix="/usage", tags=["teams"],
                   responses={code: {"model": ErrorPublic} for code in (403, 404, 409, 422, 503)})
# A row is an environment's (env_id, instance_hours, sessions) or a machine's (machine_id,
# machine_name, gpu_hours, experiments); the other kind's columns are empty.
CSV_HEADER = ("day", "team", "env_id", "instance_hours", "sessions", "machine_id", "machine_name", "gpu_hours",
              "experiments")
_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def _day(value: str, name: str) -> dt.date:
    try:
        if _DAY.match(value):
            return dt.date.fromisoformat(value)
    except ValueError:
        pass
    raise InvalidArgumentError(f"{name} must be a date YYYY-MM-DD (UTC), not {value!r}", field=name)


@router.get("", response_model=UsagePublic,
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}},
                             "description": "JSON, or with format=csv a CSV file (header " + ",".join(CSV_HEADER) + "; "
                                            "the instance rows, then the GPU rows)"},
                       404: {"model": ErrorPublic, "description": "a member asking for another team"},
                       422: {"model": ErrorPublic, "description": "a day that is not YYYY-MM-DD, or until before since"}})
async def get_usage(
    broker: BrokerDep, gateway: GatewayDep, identity: IdentityDep,
    # A calendar date (format "date"), checked by _day, whose message says which part is wrong.
    since: str | None = Query(default=None, json_schema_extra={"format": "date"},
                              description="the first day, YYYY-MM-DD (UTC); default the 1st of this month"),
    until: str | None = Query(default=None, json_schema_extra={"format": "date"},
                              description="the last day, YYYY-MM-DD (UTC), inclusive; default today"),
    team: str | None = Query(default=None, pattern=TEAM_PATTERN,
                             description="only this team's (the operator; others see their own team's)"),
    format: Literal["json", "csv"] = Query(default="json", description="csv: a file to download"),
) -> UsagePublic | Response:
    """Instance-hours per UTC day, team and env id: each session counts from its creation to its
    end (or now, while open), split at UTC midnights; a session of n sub-environments counts n
    instances. By day, team, env id. Beside them, GPU-hours of experiments per UTC day, team and
    machine: an experiment's GPUs times the time from its start to its end (or now)."""
    first, today = month_days()
    # left out: the default; given, even empty: a date (as the document's format says)
    since_day = _day(first if since is None else since, "since")
    until_day = _day(today if until is None else until, "until")
    if until_day < since_day:
        raise InvalidArgumentError(f"until ({until_day}) is before since ({since_day})", field="until")
    if team is not None:
        check_visible(identity, team)
    wanted = team if identity.is_operator else identity.team
    rows = await broker.usage(wanted, since_day.isoformat(), until_day.isoformat())
    data = [UsageRowPublic(day=r.day, team=r.team, env_id=r.env_id, instance_hours=round(r.instance_hours, 6),
                           sessions=r.sessions) for r in rows]
    gpu_error: str | None = None
    try:
        gpu_rows = await gateway.experiments.usage(wanted, since_day.isoformat(), until_day.isoformat())
    except UnavailableError as exc:
        if format == "csv":
            raise UnavailableError(f"GPU-hours of experiments: {exc.message}") from None
        gpu_rows, gpu_error = [], f"GPU-hours of experiments are missing: {exc.message}"
    gpu_data = [GpuUsageRowPublic(day=r.day, team=r.team, machine_id=r.machine_id, machine_name=r.machine_name,
                                  gpu_hours=round(r.gpu_hours, 6), experiments=r.experiments) for r in gpu_rows]
    if format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_HEADER)
        writer.writerows((r.day, r.team, r.env_id, r.instance_hours, r.sessions, "", "", "", "") for r in data)
        writer.writerows((g.day, g.team, "", "", "", g.machine_id, g.machine_name, g.gpu_hours, g.experiments)
                         for g in gpu_data)
        filename = f"usage-{since_day}-{until_day}.csv"
        return Response(out.getvalue(), media_type="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})
    total = round(sum(r.instance_hours for r in rows), 6)
    return UsagePublic(data=data, total_instance_hours=total, gpu_data=gpu_data,
                       total_gpu_hours=round(sum(r.gpu_hours for r in gpu_rows), 6), gpu_hours_error=gpu_error,
                       since=since_day.isoformat(), until=until_day.isoformat())
