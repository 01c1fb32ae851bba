"""Training runs: named series of scalars against a step axis, with hyperparameters and tags, kept
on the platform (`/v0/runs`) and drawn on its Runs pages (docs/training.md, "Training runs").

- `start_run(name, ...)` / `Run`: log from any training loop, batched and non-blocking; what is
  logged while the platform is away is kept and sent when it is back.
- `log_navix(logs, hparams)`: a navix `Experiment.run`'s logs as they are, one run per seed.
- `RunDataLogger`: an ai_traineree data logger that records into a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Run", "RunDataLogger", "log_navix", "start_run"]

_LAZY = {
    "Run": "platform_sdk.runs.run",
    "start_run": "platform_sdk.runs.run",
    "log_navix": "platform_sdk.runs.navix",
    "RunDataLogger": "platform_sdk.runs.traineree",
}

if TYPE_CHECKING:
    from platform_sdk.runs.navix import log_navix
    from platform_sdk.runs.run import Run, start_run
    from platform_sdk.runs.traineree import RunDataLogger


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'platform_sdk.runs' has no attribute {name!r}")
