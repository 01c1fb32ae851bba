"""A running observation normalizer for agents that want one (as SURREAL's ZFilter and
Stable-Baselines3's VecNormalize): the mean and variance of every observation seen so far
(Chan et al.'s parallel update, so a batch counts as its rows), and `(x - mean) / std` clipped.

    normalizer = RunningNormalizer(env.observation_space.shape)
    normalized = normalizer(observation)           # updates, then normalizes
    normalized = normalizer(observation, update=False)   # greedy test episodes: frozen

`state()` / `RunningNormalizer.from_state()` keep it in an agent's checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class RunningNormalizer:
    def __init__(self, shape: Sequence[int] | int, clip: float | None = 10.0, epsilon: float = 1e-8) -> None:
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.clip = clip
        self.epsilon = epsilon
        self.count = 0
        self.mean = np.zeros(self.shape, dtype=np.float64)
        self.var = np.ones(self.shape, dtype=np.float64)

    @property
    def std(self) -> np.ndarray:
        return np.asarray(np.sqrt(self.var + self.epsilon), dtype=np.float64)

    def update(self, batch: Any) -> None:
        """Take a batch of observations (or one observation) into the mean and variance."""
        rows = np.asarray(batch, dtype=np.float64).reshape((-1, *self.shape))
        if not rows.shape[0]:
            return
        batch_mean = rows.mean(axis=0)
        batch_var = rows.var(axis=0)
        batch_count = rows.shape[0]
        if self.count == 0:
            self.mean, self.var, self.count = batch_mean, batch_var, batch_count
            return
        total = self.count + batch_count
        delta = batch_mean - self.mean
        self.mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        self.var = m2 / total
        self.count = total

    def normalize(self, x: Any) -> np.ndarray:
        out = (np.asarray(x, dtype=np.float64) - self.mean) / self.std
        if self.clip is not None:
            out = np.clip(out, -self.clip, self.clip)
        return np.asarray(out, dtype=np.float32)

    def __call__(self, x: Any, update: bool = True) -> np.ndarray:
        if update:
            self.update(x)
        return self.normalize(x)

    def state(self) -> dict[str, Any]:
        """What to save: plain lists and numbers (JSON as it is)."""
        return {"shape": list(self.shape), "clip": self.clip, "epsilon": self.epsilon, "count": self.count,
                "mean": self.mean.tolist(), "var": self.var.tolist()}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> RunningNormalizer:
        normalizer = cls(state["shape"], clip=state["clip"], epsilon=state["epsilon"])
        normalizer.count = int(state["count"])
        normalizer.mean = np.asarray(state["mean"], dtype=np.float64).reshape(normalizer.shape)
        normalizer.var = np.asarray(state["var"], dtype=np.float64).reshape(normalizer.shape)
        return normalizer
