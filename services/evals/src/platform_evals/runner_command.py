"""The experiment that runs an eval: its command (short, stored by the machines service as any
experiment's) and its variables, which carry the runner's two files and the eval's spec (values
the machines service never stores: written to the machine, sealed while queued) besides the
eval's secrets."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

BOOTSTRAP_VARIABLE = "SIMULUSION_EVAL_BOOTSTRAP"
INSPECT_RUN_VARIABLE = "SIMULUSION_EVAL_INSPECT_RUN"
SPEC_VARIABLE = "SIMULUSION_EVAL_SPEC"
RUNNER_VARIABLES = (BOOTSTRAP_VARIABLE, INSPECT_RUN_VARIABLE, SPEC_VARIABLE)
COMMAND = (f'printf "%s" "${BOOTSTRAP_VARIABLE}" > ../eval_bootstrap.py && exec python3 ../eval_bootstrap.py')


def _machine_side(name: str) -> str:
    return (files("platform_evals") / "machine_side" / name).read_text()


def runner_variables(spec: dict[str, Any]) -> dict[str, str]:
    """The variables of the runner: bootstrap.py, inspect_run.py and the spec as JSON."""
    return {BOOTSTRAP_VARIABLE: _machine_side("bootstrap.py"), INSPECT_RUN_VARIABLE: _machine_side("inspect_run.py"),
            SPEC_VARIABLE: json.dumps(spec)}
