"""Checking an eval request before anything runs: the task and model as Inspect names them,
the arguments as JSON objects, the secrets' names, the limits."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from simulusion.evals.v1 import evals_pb2 as pb

from platform_evals.errors import InvalidEvalError
from platform_evals.requirements import checked_packages, provider_of
from platform_evals.runner_command import RUNNER_VARIABLES

TASK = re.compile(r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*(@[A-Za-z0-9_.\-]+)?$")
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
RESERVED = ("CUDA_VISIBLE_DEVICES", "PLATFORM_URL", "PLATFORM_TOKEN", *RUNNER_VARIABLES)
MAX_SECRETS = 20
MAX_SECRET_CHARS = 8192
MAX_ARGS_CHARS = 16 * 1024
MAX_LIMIT = 1_000_000
MAX_EPOCHS = 100


@dataclass(frozen=True)
class EvalAsk:
    task: str
    task_args: dict[str, Any]
    model: str
    model_args: dict[str, Any]
    limit: int
    epochs: int
    packages: list[str]
    secrets: dict[str, str]


def _object(text: str, field: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    if len(text) > MAX_ARGS_CHARS:
        raise InvalidEvalError(f"{field}: at most {MAX_ARGS_CHARS} characters of JSON", field=field)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidEvalError(f"{field} is not JSON: {exc}", field=field) from None
    if not isinstance(value, dict):
        raise InvalidEvalError(f"{field} must be a JSON object of argument names and values", field=field)
    return value


def checked_request(request: pb.CreateEvalRequest) -> EvalAsk:
    task = request.task.strip()
    if not task or len(task) > 300 or not TASK.match(task):
        raise InvalidEvalError(f"task {request.task!r}: give an Inspect task as its registry name, e.g. "
                               "inspect_evals/gpqa_diamond (package/task)", field="task")
    model = request.model.strip()
    provider_of(model)
    if len(model) > 300:
        raise InvalidEvalError("model: at most 300 characters", field="model")
    if request.limit > MAX_LIMIT:
        raise InvalidEvalError(f"limit: at most {MAX_LIMIT} samples", field="limit")
    if request.epochs > MAX_EPOCHS:
        raise InvalidEvalError(f"epochs: at most {MAX_EPOCHS}", field="epochs")
    secrets = dict(request.secrets)
    if len(secrets) > MAX_SECRETS:
        raise InvalidEvalError(f"secrets: {len(secrets)} given; at most {MAX_SECRETS}", field="secrets")
    for name, value in secrets.items():
        if not SECRET_NAME.match(name):
            raise InvalidEvalError(f"secrets: {name!r} is not a variable name (letters, digits and _, not "
                                   "starting with a digit)", field="secrets")
        if name in RESERVED:
            raise InvalidEvalError(f"secrets: {name} is set by the platform", field="secrets")
        if len(value) > MAX_SECRET_CHARS:
            raise InvalidEvalError(f"secrets: {name} has more than {MAX_SECRET_CHARS} characters", field="secrets")
    return EvalAsk(task=task, task_args=_object(request.task_args_json, "task_args"), model=model,
                   model_args=_object(request.model_args_json, "model_args"), limit=request.limit,
                   epochs=request.epochs, packages=checked_packages(list(request.packages)), secrets=secrets)
