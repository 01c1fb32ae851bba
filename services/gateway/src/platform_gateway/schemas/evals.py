"""Inspect evaluations on the users' machines (docs/evals.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

EvalStatus = Literal["queued", "running", "importing", "succeeded", "failed", "cancelled", "lost"]


class EvalCreate(BaseModel):
    """An Inspect task to run against a model on one of your machines."""

    task: str = Field(min_length=1, max_length=300, examples=["inspect_evals/gpqa_diamond"],
                      description="the task's registry name (package/task), as `inspect eval` takes it")
    task_args: dict[str, Any] = Field(default_factory=dict, description="the task's arguments (-T name=value)")
    model: str = Field(min_length=1, max_length=300, examples=["openai/gpt-4o-mini"],
                       description="provider/model, as Inspect names it; the provider's package is installed")
    model_args: dict[str, Any] = Field(default_factory=dict, description="the model's arguments (-M name=value)")
    machine: str = Field(min_length=1, max_length=64, description="the machine's id (GET /v0/machines)")
    limit: int = Field(0, ge=0, le=1_000_000, description="run the first N samples only; 0: all")
    epochs: int = Field(0, ge=0, le=100, description="times each sample runs; 0: the task's default")
    gpus: int = Field(0, ge=0, le=64, description="the machine's GPUs it gets (for a local model); 0: none")
    secrets: dict[Annotated[str, StringConstraints(max_length=128)],
                  Annotated[str, StringConstraints(max_length=8192)]] = Field(
        default_factory=dict, max_length=20, examples=[{"OPENAI_API_KEY": "sk-..."}],
        description="variables for the eval's process only (provider keys): never stored, logged or answered")
    packages: list[Annotated[str, StringConstraints(max_length=500)]] = Field(
        default_factory=list, max_length=20,
        description="more pip requirements for its environment (a model API or task package)")


class EvalProgressPublic(BaseModel):
    phase: str = Field(description="waiting, preparing (its environment), running, importing, done")
    total: int = Field(description="samples x epochs; 0 until the task started")
    done: int
    errors: int
    tokens: int


class EvalMetricPublic(BaseModel):
    name: str
    value: float
    stderr: float | None = Field(None, description="the scorer's standard error; null when it has none")


class EvalScorePublic(BaseModel):
    name: str
    scorer: str
    reducer: str
    scored_samples: int
    unscored_samples: int
    metrics: list[EvalMetricPublic]


class EvalLogPublic(BaseModel):
    name: str
    size: int
    status: str
    url: str = Field(description="the .eval file (HTTP Range supported)")


class EvalPublic(BaseModel):
    id: str = Field(description='"ev-" and 12 hex digits')
    team: str
    task: str
    task_args: dict[str, Any]
    model: str
    model_args: dict[str, Any]
    machine_id: str
    machine_name: str
    limit: int
    epochs: int
    gpus: int
    secret_names: list[str] = Field(description="the variables its process got (names only)")
    packages: list[str]
    requirements: list[str] = Field(description="what its environment on the machine installs")
    notes: list[str] = Field(description="what the task needs that the platform cannot check (downloads)")
    experiment_id: str = Field(description="the experiment that runs it: its log is the eval's")
    status: EvalStatus
    status_reason: str
    progress: EvalProgressPublic
    created_at: float
    started_at: float
    ended_at: float
    logs: list[EvalLogPublic]
    scores: list[EvalScorePublic] = Field(description="each score's metrics with their standard errors")
    samples_total: int


class EvalSamplePublic(BaseModel):
    log: str
    sample_id: str
    epoch: int
    input: str
    target: str
    answer: str
    scores: dict[str, Any] = Field(description="score name -> its value")
    tokens: int
    total_time: float
    working_time: float
    error: str
    metadata: dict[str, Any] = Field(default_factory=dict, description=(
        "the sample's metadata: its values that are text, numbers, true/false or null (text cut at 4,000 "
        "characters); a sample of platform_sdk/episodes links its recording here: session_id, recording_id, "
        "replay"))
    transcript_url: str = Field(description="Inspect's log viewer at this sample's transcript (`/v0/evals/{id}/viewer?"
                                "log_file=logs/<log>#/logs/logs/<log>/samples/sample/<sample_id>/<epoch>/`): a page "
                                "for a browser signed in to the web app")


class EvalDetailPublic(EvalPublic):
    samples: list[EvalSamplePublic]


class EvalsPublic(BaseModel):
    evals: list[EvalPublic] = Field(description="newest first")
