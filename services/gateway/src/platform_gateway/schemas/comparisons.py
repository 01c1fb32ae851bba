"""Comparisons of agents (`python -m platform_sdk.agents.compare`), kept by the recorder.

The document is the comparison command's: these models name what the Comparisons page reads and
check their types strictly (a boolean is no number, a fraction no whole number); members they do
not name are kept as they are (`extra="allow"`). Numbers that were not finite come back as the
strings "nan", "inf" or "-inf", as in the recordings.
"""

from __future__ import annotations

from typing import Any

from platform_contracts import limits
from pydantic import BaseModel, ConfigDict, Field

from platform_gateway.schemas.recordings import STORED_ID_PATTERN

# A measure: a number, a non-finite one as a string, or null when it could not be measured.
Measure = float | str | None


class RewardWindowPublic(BaseModel):
    """The mean reward per step over one window of `window` steps starting at session step `step`."""

    model_config = ConfigDict(extra="allow", strict=True)

    step: int
    mean: Measure = None


class RecoveryPublic(BaseModel):
    """How an agent came back after the world changes at step `at`."""

    model_config = ConfigDict(extra="allow", strict=True)

    at: int = Field(description="the session step of the change(s)")
    changes: list[dict[str, Any]] = Field(default_factory=list, description="the timeline entries at that step")
    before: Measure = Field(None, description="the mean reward per step over the window before `at`")
    steps: int | None = Field(None, description="steps after `at` until a window's mean was back within 10% of "
                                                "`before` (0: the first window already was); null when not recovered")
    worst: Measure = Field(None, description="the lowest window mean after `at`, up to the recovering window")
    recovered: bool = False
    too_close: bool = Field(False, description="no full window fits before or after the change: not measured")


class RetentionPublic(BaseModel):
    """How much of an earlier world's level an agent kept when the world returned to it at `at`."""

    model_config = ConfigDict(extra="allow", strict=True)

    at: int
    returns_to: int | None = Field(None, description="the start step of the earlier time in the same world")
    before: Measure = None
    after: Measure = None
    retention: Measure = Field(None, description="1 - (before - after) / |before|; null when before is 0")
    too_close: bool = False


class AgentMeasuresPublic(BaseModel):
    """One agent's measures (docs/compare-measures.md says how each is made). Also, only when the
    agent reported them: `settle_steps` and `wait_steps`, the means of its own measures of work
    per decision that reported them (absent otherwise, so not fields here)."""

    model_config = ConfigDict(extra="allow", strict=True)

    success: Measure = Field(None, description="the share of successful episodes (or steps); null: none reported")
    success_of: str | None = Field(None, description='"episodes" or "steps": what `success` counts')
    compute_s: Measure = Field(None, description="mean seconds spent in act per decision")
    recovery: list[RecoveryPublic] = Field(default_factory=list, description="one per change inside the run")
    retention: list[RetentionPublic] = Field(default_factory=list,
                                             description="one per return to an earlier world")


class ComparisonRunPublic(BaseModel):
    """One agent's run from one seed's snapshot (`--seeds N` makes N of them per agent)."""

    model_config = ConfigDict(extra="allow", strict=True)

    seed: int = Field(description="the seed of the warm-up (and first reset) whose snapshot it started from")
    snapshot_id: str | None = Field(None, description="that seed's saved snapshot, which every agent started from")
    session_id: str | None = None
    recording_id: str | None = Field(None, description="its recording, when the run was recorded")
    steps: int | None = Field(None, ge=0)
    episodes: int | None = Field(None, ge=0)
    measures: AgentMeasuresPublic | None = None
    reward_windows: list[RewardWindowPublic] = Field(default_factory=list)


class ComparisonAgentPublic(BaseModel):
    """One agent's run in a comparison."""

    model_config = ConfigDict(extra="allow", strict=True)

    name: str = Field(min_length=1, description="the agent's name in the comparison (NAME of --agent NAME=...)")
    agent: str | None = Field(None, description="its factory, module:function")
    load: str | None = Field(None, description="the checkpoint it started from; null: fresh")
    session_id: str | None = None
    recording_id: str | None = Field(
        None, min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, pattern=STORED_ID_PATTERN,
        description="its session's recording (the replay page's `/recordings/<id>`); null when not recorded")
    steps: int | None = Field(None, ge=0)
    episodes: int | None = Field(None, ge=0)
    measures: AgentMeasuresPublic | None = None
    reward_windows: list[RewardWindowPublic] = Field(
        default_factory=list, description="consecutive full windows from the agent's first step")
    runs: list[ComparisonRunPublic] = Field(
        default_factory=list, description="its run from each seed's snapshot, in the order of `seeds` (the "
        "top-level measures and windows are the first's); empty in a comparison made before --seeds")


class ComparisonCreate(BaseModel):
    """A comparison to store: the document without `id` and `created` (the recorder sets them)."""

    model_config = ConfigDict(extra="allow", strict=True)

    env: str = Field(min_length=1, description="the catalog id of the environment")
    kwargs: dict[str, Any] | None = Field(None, description="the environment's arguments (its timeline included)")
    world_changes: list[dict[str, Any]] | None = Field(None, description="the timeline of world changes")
    warmup: int | None = Field(None, ge=0, description="steps the seeded random agent played before the snapshot")
    steps: int | None = Field(None, ge=0, description="steps each agent played")
    window: int | None = Field(None, ge=1, description="steps rewards are averaged over")
    seed: int | None = None
    seeds: list[int] | None = Field(None, description="the seeds every agent ran over (--seeds N: seed, seed+1, ...)")
    snapshot_id: str | None = Field(None, description="the saved snapshot every agent started from")
    first_step: int | None = Field(None, ge=0, description="the session step of each agent's first step")
    agents: list[ComparisonAgentPublic] = Field(min_length=1)


class ComparisonPublic(ComparisonCreate):
    """A stored comparison."""

    id: str = Field(description='"cmp-" and 12 hex digits')
    created: str = Field(description="when it was stored, ISO 8601 UTC")
    team: str = Field(default="default", description="the team that stored it: only that team sees it")


class ComparisonSummaryPublic(BaseModel):
    """What the list shows of a comparison."""

    id: str
    created: str | None = None
    env: str | None = None
    agents: list[str | None] = Field(default_factory=list, description="the agents' names")
    steps: int | None = None
    window: int | None = None
    team: str = "default"


class ComparisonsPublic(BaseModel):
    comparisons: list[ComparisonSummaryPublic] = Field(description="newest first")
