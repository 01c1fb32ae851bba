"""Teams and their quotas, members, usage."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from platform_gateway.schemas.json_body import JsonBody
from platform_gateway.schemas.tokens import TEAM_PATTERN

DAY_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
MAX_SESSIONS_LIMIT = 1_000_000
MAX_HOURS_LIMIT = 1e9
MINT_DESCRIPTION = ("whether the team's members may make API tokens (POST /v0/tokens); its admins and the operator "
                    "always may")


class TeamCreate(JsonBody):

    name: str = Field(pattern=TEAM_PATTERN, description="lowercase letters, digits and '-', up to 63",
                      examples=["acme"])
    max_sessions: int | None = Field(default=None, ge=0, le=MAX_SESSIONS_LIMIT,
                                     description="open sessions at once; null: no limit")
    instance_hours_per_month: float | None = Field(
        default=None, ge=0, le=MAX_HOURS_LIMIT,
        description="instance-hours per UTC calendar month (a session of n sub-environments counts n); null: no limit")
    members_mint_tokens: bool | None = Field(default=None, description=MINT_DESCRIPTION + "; null or left out: true")


class TeamUpdate(JsonBody):
    """What to change: a field left out stays as it is, null clears a quota (no limit). Quotas
    are the operator's to change; `members_mint_tokens` the team's admins' too."""


    max_sessions: int | None = Field(default=None, ge=0, le=MAX_SESSIONS_LIMIT, description="the operator only")
    instance_hours_per_month: float | None = Field(default=None, ge=0, le=MAX_HOURS_LIMIT,
                                                   description="the operator only")
    members_mint_tokens: bool | None = Field(default=None, description=MINT_DESCRIPTION + "; null or left out: as it is")


class TeamPublic(BaseModel):
    name: str
    max_sessions: int | None = Field(description="open sessions at once; null: no limit")
    instance_hours_per_month: float | None = Field(description="per UTC calendar month; null: no limit")
    members_mint_tokens: bool = Field(description=MINT_DESCRIPTION)
    created_at: float | None = Field(description="null for a team that exists without being created ('default')")
    open_sessions: int = Field(description="its starting and running sessions now")
    instance_hours_this_month: float = Field(description="used in the current UTC month, open sessions until now")


class TeamListPublic(BaseModel):
    teams: list[TeamPublic]


class MemberCreate(JsonBody):

    subject: str = Field(min_length=1, max_length=320, pattern=r"^[^/\s]+$",
                         description="the identity provider's `sub`, or an email address (its `email` claim)",
                         examples=["alice@example.com"])
    team: str = Field(pattern=TEAM_PATTERN, examples=["acme"])
    role: Literal["member", "admin"] = "member"


class MemberPublic(BaseModel):
    subject: str
    team: str
    role: str
    added_by: str = Field(description="who added them: 'admin' (PLATFORM_ADMIN_TOKEN), a token's id, or 'oidc:<sub>'")
    created_at: float


class MemberListPublic(BaseModel):
    members: list[MemberPublic]


class UsageRowPublic(BaseModel):
    day: str = Field(description="YYYY-MM-DD (UTC)")
    team: str
    env_id: str
    instance_hours: float = Field(description="a session of n sub-environments counts n instances")
    sessions: int = Field(description="sessions that ran that day")


class GpuUsageRowPublic(BaseModel):
    day: str = Field(description="YYYY-MM-DD (UTC)")
    team: str
    machine_id: str
    machine_name: str
    gpu_hours: float = Field(description="GPUs x hours its experiments ran that day (started_at to ended_at, or now)")
    experiments: int = Field(description="experiments that ran on its GPUs that day")


class UsagePublic(BaseModel):
    data: list[UsageRowPublic] = Field(description="by day, team, env_id")
    total_instance_hours: float
    gpu_data: list[GpuUsageRowPublic] = Field(description="GPU-hours of experiments on your machines, by day, "
                                                          "team, machine_id")
    total_gpu_hours: float
    gpu_hours_error: str | None = Field(description="why GPU-hours are missing (the machines service did not "
                                                    "answer); null when gpu_data is complete")
    since: str = Field(description="the first day, YYYY-MM-DD (UTC)")
    until: str = Field(description="the last day, YYYY-MM-DD (UTC), inclusive")
