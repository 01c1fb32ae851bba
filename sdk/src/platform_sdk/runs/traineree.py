"""An ai_traineree data logger that records into a run: give `RunDataLogger(run)` as the
`data_logger` of ai_traineree's `EnvRunner` (or `MultiAgentEnvRunner`) and its `episode/*`,
`loss/*` and `env/*` values become the run's curves.

It keeps ai_traineree's `DataLogger` interface (`log_value`, `log_values_dict`, `set_hparams`,
`create_histogram`, `add_histogram`, `close`) without importing ai_traineree:

- `log_values_dict(name, values, step)` records each `name/key` (as TensorBoard's add_scalars).
- `set_hparams(hparams=...)`: its `hparam/*` entries (what the runner sets at the end: total
  episodes and iterations, the final average score) go to the run's summary; the others are the
  run's hyperparameters.
- A histogram is recorded as `name/min`, `name/mean` and `name/max` (a run holds scalars); for
  `add_histogram`'s ready-made ones the mean is over its buckets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from platform_sdk.runs.run import Run, start_run

SUMMARY_PREFIX = "hparam/"


class RunDataLogger:
    """ai_traineree's `DataLogger`, recording into `run` (or a new run of `name`)."""

    name = "RunDataLogger"

    def __init__(self, run: Run | None = None, *, name: str = "ai_traineree", **run_options: Any) -> None:
        self.run = run if run is not None else start_run(name, **run_options)

    def __str__(self) -> str:
        return f"{self.name}<{self.run.url}>"

    def close(self) -> None:
        self.run.finish()

    def set_hparams(self, *, hparams: Mapping[str, Any]) -> None:
        summary = {key[len(SUMMARY_PREFIX):]: value for key, value in hparams.items()
                   if key.startswith(SUMMARY_PREFIX)}
        params = {key: value for key, value in hparams.items() if not key.startswith(SUMMARY_PREFIX)}
        self.run.update(hparams=params, summary=summary or None)

    def log_value(self, name: str, value: Any, step: int) -> None:
        self.run.log({name: float(value)}, step=int(step))

    def log_values_dict(self, name: str, values: Mapping[str, Any], step: int) -> None:
        self.run.log({f"{name}/{key}": float(value) for key, value in values.items()}, step=int(step))

    def create_histogram(self, name: str, values: Any, step: int) -> None:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
        if array.size:
            self.run.log({f"{name}/min": array.min(), f"{name}/mean": array.mean(), f"{name}/max": array.max()},
                         step=int(step))

    def add_histogram(self, name: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                      bucket_limits: Any, bucket_counts: Any, global_step: int | None = None,
                      **_: Any) -> None:
        """A ready-made histogram (TensorBoard's `add_histogram_raw` arguments): its range, and
        the mean of its buckets' upper limits weighted by their counts."""
        values = {f"{name}/min": float(min), f"{name}/max": float(max)}
        limits = np.asarray(bucket_limits, dtype=np.float64).reshape(-1)
        counts = np.asarray(bucket_counts, dtype=np.float64).reshape(-1)
        if limits.shape == counts.shape and counts.sum() > 0:
            values[f"{name}/mean"] = float((limits * counts).sum() / counts.sum())
        self.run.log(values, step=int(global_step or 0))
