"""Experiments on the users' GPU machines (docs/gpu-machines.md, "Experiments")."""

from __future__ import annotations

from typing import Annotated, Literal

from platform_contracts import limits
from pydantic import BaseModel, Field, StringConstraints

RayWorkerState = Literal["starting", "running", "stopped", "failed"]


class RayCreate(BaseModel):
    """Run Ray across your machines (docs/training.md, "Distributed training"): a Ray head on the experiment's
    machine, a Ray worker on each machine of `workers`, each in the checkout's virtual environment; the command
    runs on the head with RAY_ADDRESS set once every worker joined; all stop when the experiment ends."""

    workers: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=16,
        description="machine ids of your team (not the experiment's machine, no repeats, each ready); each gets "
                    "the same checkout and runs `ray start --address <head>:<port> --block`. The platform assigns "
                    "none of their GPUs: Ray sees all a worker machine has")
    setup: str = Field("", max_length=8192, examples=['uv venv .venv && uv pip install -p .venv "ray[rllib]==2.60.0" '
                                                      'torch wheels/platform_sdk-0.1.0-py3-none-any.whl'],
                       description="run by bash in the checkout on every machine (head and workers) before Ray "
                                   "starts: it makes the virtual environment; empty: none")
    venv: str = Field(".venv", max_length=255, description="the checkout's virtual environment (or an absolute path) "
                                                           "whose bin/ is put first on PATH: `ray` and `python` are its")
    port: int = Field(6379, ge=1, le=65535, description="the head's port (Ray's GCS), reached by the workers")
    head_address: str = Field("", max_length=255,
                              description="the head as the workers reach it; empty: the experiment machine's SSH host")
    start_args: str = Field("", max_length=1024, examples=["--num-cpus 4"],
                            description="more arguments of every `ray start` (head and workers)")


class RayWorkerPublic(BaseModel):
    machine_id: str
    machine_name: str
    state: RayWorkerState = Field(description="starting (setup, joining), running (joined the head), stopped, failed")
    state_reason: str = Field(description="why it failed or was stopped")
    run_dir: str = Field(description="its folder on its machine (checkout/, log)")


class RayPublic(BaseModel):
    workers: list[RayWorkerPublic]
    setup: str
    venv: str
    port: int
    head_address: str = Field(description="the head as the workers reach it")
    start_args: str


ExperimentStatus = Literal["queued", "starting", "running", "succeeded", "failed", "cancelled", "lost"]


class ExperimentCreate(BaseModel):
    """A command to run on one of your machines, in a checkout of a git repository or in a folder of the
    platform's host uploaded there (one of `repository` and `folder`; neither: the command alone, in an empty
    folder)."""

    machine: str = Field(min_length=1, max_length=64, description="the machine's id (GET /v0/machines)")
    repository: str = Field("", max_length=2048, examples=["https://github.com/acme/train.git"],
                            description="a git URL (or a path) the machine can clone: `git clone` runs there")
    folder: str = Field("", max_length=4096, examples=["/srv/code/train"],
                        description="instead of repository: a folder of the platform's host (absolute path), packed "
                                    "(its .gitignore honoured in a git work tree) and uploaded as the checkout; only "
                                    "under the folders the operator allows (PLATFORM_EXPERIMENTS_UPLOAD_ROOTS)")
    ref: str = Field("", max_length=255, description="a branch, tag or commit to check out; empty: the default branch")
    command: str = Field(min_length=1, max_length=limits.MAX_EXPERIMENT_COMMAND_CHARS, examples=["python train.py --epochs 3"],
                         description="run by bash in the checkout, detached from the connection")
    gpus: int = Field(0, ge=0, le=64, description="how many of the machine's GPUs it gets (CUDA_VISIBLE_DEVICES), "
                                                  "alone unless share_gpus; 0: none. More than are free now: it "
                                                  "is queued until they are")
    share_gpus: bool = Field(False, description="may share GPUs with other experiments that asked the same (it "
                                                "takes the least-loaded); never with one that asked for its own")
    env: dict[Annotated[str, StringConstraints(max_length=128)],
              Annotated[str, StringConstraints(max_length=limits.MAX_EXPERIMENT_ENV_VALUE_CHARS)]] = Field(
        default_factory=dict, max_length=limits.MAX_EXPERIMENT_ENV_VARIABLES, description="more variables for the command (names: letters, "
                                "digits, _); their values are not kept by the platform")
    ray: RayCreate | None = Field(None, description="run the command on a Ray cluster across your machines; "
                                                    "null: no Ray")


class ExperimentPublic(BaseModel):
    id: str = Field(description='"x-" and 12 hex digits')
    team: str
    machine_id: str
    machine_name: str
    repository: str = Field(description="the git URL cloned; empty for a folder uploaded")
    folder: str = Field("", description="the folder of the platform's host uploaded as the checkout (resolved); "
                                        "empty when cloned")
    ref: str
    command: str
    gpus: int
    gpu_indices: list[int] = Field(description="nvidia-smi's indices of the GPUs it has")
    gpu_uuids: list[str] = Field(description="their UUIDs: its CUDA_VISIBLE_DEVICES")
    env_names: list[str] = Field(description="the variables given (names only)")
    status: ExperimentStatus
    status_reason: str = Field(description="why it failed, was cancelled or lost")
    exit_code: int | None = Field(None, description="the command's exit code once it ended (null before, or "
                                                    "when it was killed without one)")
    created_at: float
    started_at: float = Field(description="Unix seconds; 0 before it started")
    ended_at: float = Field(description="Unix seconds; 0 while it runs")
    run_dir: str = Field(description="its folder on the machine: checkout/, log, exit_code")
    log_bytes: int = Field(description="bytes of its log the platform holds")
    platform_url: str = Field(description="PLATFORM_URL as the command sees it")
    token_id: str = Field(description="the id of the API token in its PLATFORM_TOKEN (revoked when it ends); "
                                      "empty without API tokens")
    share_gpus: bool = Field(description="it may share its GPUs with other experiments that asked the same")
    queue_position: int = Field(description="while queued: its place on its machine's queue (1: the next to "
                                            "start); 0 otherwise")
    ray: RayPublic | None = Field(None, description="its Ray cluster: the head runs on its machine, the workers' "
                                                    "states here; null: no Ray")


class ExperimentsPublic(BaseModel):
    experiments: list[ExperimentPublic] = Field(description="newest first")


class ExperimentLogPublic(BaseModel):
    """Bytes of the log from `offset`, as text (UTF-8; a character cut at the end waits for the next read)."""

    offset: int = Field(description="the byte offset `text` starts at")
    next_offset: int = Field(description="ask from here next")
    text: str
    ended: bool = Field(description="the experiment ended and nothing follows next_offset")
    status: ExperimentStatus
