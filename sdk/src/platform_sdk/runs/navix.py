"""navix's training logs into runs: `log_navix(logs, hparams)` takes what `Experiment.run`
returns (its second value) as it is, seeds as the leading axis, and records one run per seed.

The reduction is navix's `derive_episodic_metrics`: the raw per-step buffers
`agent/train/{done_mask,returns,lengths}`, shaped `(seeds, updates, steps, envs)`, become
`agent/episode/{returns,length,success_rate}` per update, the masked mean over the episodes that
ended in that update (success: a return of exactly 1, as navix counts it). With the costs
`Experiment.run` adds (`experiment/costs/{fps,wall_time}`, `(seeds, updates)`) these are the five
headline metrics, each recorded against `agent/train/frames` (the step and the frames of every
point). An update in which no episode ended has no episodic value (navix's NaN): it is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from platform_sdk.runs.run import Run

REQUIRED_LOG_KEYS = {
    "agent/train/done_mask": "which steps ended an episode",
    "agent/train/lengths": "per-step episode length",
    "agent/train/returns": "per-step episodic return",
}
FRAMES_KEY = "agent/train/frames"
EPISODE_METRICS = ("agent/episode/returns", "agent/episode/length", "agent/episode/success_rate")
COST_METRICS = ("experiment/costs/fps", "experiment/costs/wall_time")
HEADLINE_METRICS = EPISODE_METRICS + COST_METRICS


def masked_mean(values: np.ndarray, mask: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """The mean of `values` where `mask` holds, over `axis` (NaN where nothing does)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean: np.ndarray = np.sum(np.where(mask, values, 0), axis=axis) / np.sum(mask, axis=axis)
    return mean


def derive_episodic_metrics(logs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """`logs` with `agent/episode/{length,returns,success_rate}` added, as navix derives them.

    Raises:
        KeyError: a raw buffer is missing (navix's own message).
    """
    missing = [key for key in REQUIRED_LOG_KEYS if key not in logs]
    if missing:
        reasons = ", ".join(f"{key!r} ({REQUIRED_LOG_KEYS[key]})" for key in missing)
        raise KeyError(f"logs is missing required key(s): {reasons}.")
    metrics = {key: np.asarray(value) for key, value in logs.items()}
    mask = metrics["agent/train/done_mask"].astype(bool)
    returns = metrics["agent/train/returns"]
    metrics["agent/episode/length"] = masked_mean(metrics["agent/train/lengths"], mask, (-2, -1))
    metrics["agent/episode/returns"] = masked_mean(returns, mask, (-2, -1))
    metrics["agent/episode/success_rate"] = masked_mean(returns == 1.0, mask, (-2, -1))
    return metrics


def log_navix(
    logs: Mapping[str, Any],
    hparams: Any = None,
    *,
    name: str = "navix",
    group: str | None = None,
    seeds: Sequence[int] | None = None,
    tags: Iterable[str] = (),
    timeout: float = 60.0,
    **run_options: Any,
) -> list[Run]:
    """Record a navix experiment's logs, one run per seed, and wait until they are sent.

    Args:
        logs: `Experiment.run`'s logs (also a bare `Agent.train`'s under `jax.vmap`): every
            array has the seeds as its leading axis.
        hparams: the agent's hyperparameters (navix's frozen struct, or a dict).
        name, group: the runs' name and group (default: `name`); each run is `<name> seed <s>`.
        seeds: the seeds of the leading axis (default 0, 1, ...).
        tags, run_options: as `Run`'s (url, token, experiment_id, ...).

    Returns:
        The runs, finished.

    Raises:
        KeyError: a raw buffer or `agent/train/frames` is missing.
        ValueError: the arrays do not share their seeds and updates.
    """
    metrics = derive_episodic_metrics(logs)
    if FRAMES_KEY not in metrics:
        raise KeyError(f"logs is missing required key(s): {FRAMES_KEY!r} (the x axis of every metric).")
    frames = metrics[FRAMES_KEY]
    if frames.ndim != 2:
        raise ValueError(f"{FRAMES_KEY} must be shaped (seeds, updates), not {frames.shape}")
    count, updates = frames.shape
    seed_values = list(seeds) if seeds is not None else list(range(count))
    if len(seed_values) != count:
        raise ValueError(f"{len(seed_values)} seeds given for a leading axis of {count}")
    present = [key for key in HEADLINE_METRICS if key in metrics]
    for key in present:
        if metrics[key].shape[:2] != (count, updates):
            raise ValueError(f"{key} is shaped {metrics[key].shape}: its first two axes must be (seeds, updates) "
                             f"= {(count, updates)}, as {FRAMES_KEY}'s")
    runs = []
    for index, seed in enumerate(seed_values):
        run = Run(f"{name} seed {seed}", group=group or name, seed=int(seed), tags=tags, hparams=hparams,
                  **run_options)
        for update in range(updates):
            frame = int(frames[index, update])
            values = {key: metrics[key][index, update] for key in present}
            run.log({key: value for key, value in values.items() if np.isfinite(value)}, step=frame, frames=frame)
        run.update(summary={key: last_finite(metrics[key][index]) for key in present})
        runs.append(run)
    for run in runs:
        run.finish(timeout=timeout)
    return runs


def last_finite(series: np.ndarray) -> float | None:
    """The last finite value of a series (None when there is none)."""
    finite = np.flatnonzero(np.isfinite(series))
    return float(series[finite[-1]]) if finite.size else None
