"""Training runs (`/v0/runs`): the bodies and answers (the contract: docs/training.md, "The API").
Bodies are strict (`JsonBody`).

Non-finite numbers are refused where they are taken (a metric point's value, hparams, summary):
JSON has no NaN or infinity, and a chart cannot draw them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from platform_contracts import limits, names
from pydantic import BaseModel, Field

from platform_gateway.schemas.json_body import JsonBody
from platform_gateway.run_store import MetricInfo, Run, Series
from platform_gateway.schemas.recordings import STORED_ID_PATTERN

# one rule for the API and its client (platform_sdk.runs): platform_contracts.names
RUN_ID_PATTERN = names.RUN_ID_PATTERN
RUN_ID_RULE = names.RUN_ID_RULE
METRIC_NAME_PATTERN = names.METRIC_NAME_PATTERN
METRIC_NAME_RULE = names.METRIC_NAME_RULE
# `GET /v0/runs/{id}/metrics?names=`: metric names separated by commas
METRIC_NAMES_PATTERN = r"^[A-Za-z0-9_.:/,-]*$"
# A run's name, group and tags: any text without control characters
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]+$"

MAX_POINTS_PER_REQUEST = limits.MAX_RUN_POINTS_PER_REQUEST
MAX_TAGS = 32
MAX_HPARAMS = 256
MAX_LINKED_IDS = 256  # session_ids, recording_ids

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
# A hyperparameter's or summary's value: JSON's scalars (numbers finite)
Scalar = bool | int | FiniteFloat | Annotated[str, Field(max_length=1024)] | None
Tag = Annotated[str, Field(min_length=1, max_length=64, pattern=TEXT_PATTERN)]
LinkedId = Annotated[str, Field(min_length=1, max_length=200, pattern=STORED_ID_PATTERN)]
RunState = Literal["running", "finished", "failed"]
Hparams = Annotated[dict[Annotated[str, Field(min_length=1, max_length=128)], Scalar],
                    Field(max_length=MAX_HPARAMS)]


class RunCreate(JsonBody):
    id: str | None = Field(default=None, pattern=RUN_ID_PATTERN,
                           description=f"{RUN_ID_RULE}; chosen by the client so that logging can start while the "
                                       "platform is away, and a retry is idempotent (an existing run of yours is "
                                       "answered, 200, with what is given merged into it); left out: "
                                       "'run-<uuid4 hex>'", examples=["run-ppo-cartpole-s1"])
    name: str = Field(min_length=1, max_length=128, pattern=TEXT_PATTERN)
    group: str | None = Field(default=None, min_length=1, max_length=128, pattern=TEXT_PATTERN,
                              description="runs of one group are the seeds of one configuration, charted as their "
                                          "mean and min-max band; default: the name")
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    hparams: Hparams = Field(default_factory=dict)
    experiment_id: LinkedId | None = None
    session_ids: list[LinkedId] = Field(default_factory=list, max_length=MAX_LINKED_IDS)
    recording_ids: list[LinkedId] = Field(default_factory=list, max_length=MAX_LINKED_IDS)


class RunUpdate(JsonBody):
    """What to change: lists are unioned with the run's, dicts merged into its."""

    state: RunState | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    hparams: Hparams = Field(default_factory=dict)
    session_ids: list[LinkedId] = Field(default_factory=list, max_length=MAX_LINKED_IDS)
    recording_ids: list[LinkedId] = Field(default_factory=list, max_length=MAX_LINKED_IDS)
    summary: Hparams = Field(default_factory=dict)


class MetricInfoPublic(BaseModel):
    name: str
    points: int
    last_step: int
    last_value: float = Field(description="the value at `last_step`: the run's final value of the metric")

    @classmethod
    def of(cls, info: MetricInfo) -> MetricInfoPublic:
        return cls(name=info.name, points=info.points, last_step=info.last_step, last_value=info.last_value)


def iso_utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RunPublic(BaseModel):
    id: str = Field(examples=["run-ppo-cartpole-s1"])
    name: str
    group: str
    seed: int | None
    tags: list[str]
    hparams: dict[str, bool | int | float | str | None]
    experiment_id: str | None
    session_ids: list[str]
    recording_ids: list[str]
    state: RunState
    summary: dict[str, bool | int | float | str | None]
    created_at: str = Field(description="ISO 8601, UTC", examples=["2026-12-07T06:00:00.000Z"])
    updated_at: str = Field(description="ISO 8601, UTC: the last change or metric point written")
    metrics: list[MetricInfoPublic] = Field(description="every series of the run with its final value, by name")

    @classmethod
    def of(cls, run: Run) -> RunPublic:
        return cls(id=run.id, name=run.name, group=run.group, seed=run.seed, tags=run.tags, hparams=run.hparams,
                   experiment_id=run.experiment_id, session_ids=run.session_ids, recording_ids=run.recording_ids,
                   state=run.state, summary=run.summary, created_at=iso_utc(run.created_at), updated_at=iso_utc(run.updated_at),
                   metrics=[MetricInfoPublic.of(info) for info in run.metrics])


class RunsPublic(BaseModel):
    data: list[RunPublic] = Field(description="newest first")


class MetricPointIn(JsonBody):
    name: str = Field(pattern=METRIC_NAME_PATTERN, examples=["train/episode_return"])
    step: int = Field(ge=0, le=2**62)
    value: float = Field(description="finite (NaN and infinity are refused, naming the point)")
    time: FiniteFloat | None = Field(default=None, ge=0, description="unix seconds; default: when the gateway "
                                                                     "receives it")
    frames: int | None = Field(default=None, ge=0, le=2**62)


class MetricPointsIn(JsonBody):
    points: list[MetricPointIn] = Field(min_length=1, max_length=MAX_POINTS_PER_REQUEST,
                                        description="a point of the same (name, step) as a stored one replaces it")


class MetricsAccepted(BaseModel):
    accepted: int


class SeriesPublic(BaseModel):
    step: list[int]
    value: list[float]
    time: list[float]
    frames: list[int | None]

    @classmethod
    def of(cls, series: Series) -> SeriesPublic:
        return cls(step=series.step, value=series.value, time=series.time, frames=series.frames)


class RunMetricsPublic(BaseModel):
    run_id: str
    series: dict[str, SeriesPublic] = Field(description="by name, each sorted by step")
