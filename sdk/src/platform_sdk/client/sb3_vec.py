"""A batched session as a Stable-Baselines3 `VecEnv`, without SB3 as a dependency.

SB3 trains on its own vectorized environment type and refuses Gymnasium's `VectorEnv`.
`as_sb3_vec_env(vec)` (or `make_vec(...).sb3()`) gives a Gymnasium vector environment whose
autoreset mode is SAME_STEP (`make_vec(..., auto_reset=True)`: an ended sub-environment resets in
the same step, so each SB3 step is one round trip) SB3's face: `num_envs`, the single
`observation_space`/`action_space`, `reset()` returning the observations alone (infos in
`reset_infos`), `step_async`/`step_wait` returning (observations, float32 rewards, bool dones,
one info dict per sub-environment) with SB3's auto-reset conventions (the next episode's first
observation returned, `infos[i]["terminal_observation"]` the ended one's last,
`infos[i]["TimeLimit.truncated"]`), and `seed(s)` giving s, s+1, ... at the next reset, as SB3's
`DummyVecEnv` does.

SB3 checks `isinstance(env, VecEnv)`: when SB3 can be imported the face is an instance of a
subclass of SB3's `VecEnv` made at the first call (`sb3_class`), so SB3's own methods
(`render`, `has_attr`, `unwrapped`, the wrappers' attribute lookups) are there too; without SB3
it is the plain `SB3VecFace`. This module imports SB3 only inside `sb3_class`.

The sub-environments of one batched session live in one remote instance, so their attributes
are the session's: `get_attr(name)` gives the batched session's attribute for every asked index
(`observation_space`/`action_space`: the single ones), `set_attr` sets it on the session (all
indices only), `env_method(name)` calls the session's method once and gives each asked index its
element when the result has one per sub-environment (e.g. `snapshot`), else the whole result;
`env_is_wrapped` is False (no local wrapper).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

Indices = None | int | Iterable[int]

_SB3_CLASS: type[SB3VecFace] | None = None


class SB3VecFace:
    """SB3's `VecEnv` interface over a Gymnasium vector environment in SAME_STEP autoreset mode."""

    def __init__(self, vec: VectorEnv[Any, Any, Any]) -> None:
        mode = vec.metadata.get("autoreset_mode")
        if mode is not AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3's VecEnv resets an ended environment in the same step: the vector environment's autoreset "
                f"mode must be SAME_STEP (platform_sdk.make_vec(..., auto_reset=True)), not {mode}")
        self.vec = vec
        self.num_envs: int = vec.num_envs
        self.observation_space: gym.Space[Any] = vec.single_observation_space
        self.action_space: gym.Space[Any] = vec.single_action_space
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._seeds: list[int | None] = [None] * self.num_envs
        self._options: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self.render_mode: str | None = vec.render_mode
        self.metadata: dict[str, Any] = {
            "render_modes": ["human", "rgb_array"] if self.render_mode == "rgb_array" else
            ([self.render_mode] if self.render_mode else [])}
        self._actions: np.ndarray | None = None

    # -- SB3's VecEnv -------------------------------------------------------------------------
    def reset(self) -> Any:
        """Reset every sub-environment (with the seeds of `seed()` and options of
        `set_options()`, once); returns the observations, their infos in `reset_infos`."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = self._options[0] if self._options else {}
        if any(o != options for o in self._options):
            raise ValueError("the sub-environments of one batched session reset with the same options")
        reset: Any = self.vec.reset  # Gymnasium types `seed` as an int; its vector envs take a list too
        observations, infos = reset(seed=seeds, options=options or None)
        self.reset_infos = unbatch_infos(infos, self.num_envs)
        self._seeds = [None] * self.num_envs
        self._options = [{} for _ in range(self.num_envs)]
        return copy_observations(observations)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One step of every sub-environment (one round trip); an ended one's next first
        observation is returned, its last in `infos[i]["terminal_observation"]`."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        observations, rewards, terminations, truncations, infos = self.vec.step(actions)
        listed = unbatch_infos(infos, self.num_envs)
        dones = np.logical_or(terminations, truncations)
        out: list[dict[str, Any]] = []
        for i, info in enumerate(listed):
            if dones[i]:
                final_info = info.pop("final_info", {})
                final_obs = info.pop("final_obs")
                self.reset_infos[i] = info
                info = dict(final_info)
                info["terminal_observation"] = final_obs
            info["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
            out.append(info)
        return (copy_observations(observations), np.asarray(rewards, dtype=np.float32),
                np.asarray(dones, dtype=np.bool_), out)

    def step(self, actions: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        self.step_async(actions)
        return self.step_wait()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next reset: `seed`, `seed + 1`, ... (random when None), as SB3's."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        """Options for the next reset (the same for every sub-environment)."""
        if options is None:
            options = {}
        self._options = [dict(options) for _ in range(self.num_envs)] if isinstance(options, dict) else \
            [dict(o) for o in options]

    def close(self) -> None:
        self.vec.close()

    def get_attr(self, attr_name: str, indices: Indices = None) -> list[Any]:
        value = self._attribute(attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Indices = None) -> None:
        if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"set_attr({attr_name!r}): the sub-environments of one batched session share their "
                             "attributes: set it for all of them (indices=None)")
        setattr(self.vec, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Indices = None,
                   **method_kwargs: Any) -> list[Any]:
        result = getattr(self.vec, method_name)(*method_args, **method_kwargs)
        asked = list(self._get_indices(indices))
        if isinstance(result, (list, tuple)) and len(result) == self.num_envs:
            return [result[i] for i in asked]
        return [result for _ in asked]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]],
                       indices: Indices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each sub-environment's frame, when the vector environment renders them."""
        frames: Any = self.vec.render()
        if frames is None:
            return [None] * self.num_envs
        return list(frames)

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """The sub-environments' frames tiled into one picture (`rgb_array`)."""
        images = self.get_images()
        if any(image is None for image in images):
            return None
        return tile_images([np.asarray(image) for image in images])

    def _get_indices(self, indices: Indices) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def _attribute(self, name: str) -> Any:
        if name in ("observation_space", "action_space"):
            return getattr(self.vec, f"single_{name}")
        return getattr(self.vec, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.vec!r}>"


def sb3_class() -> type[SB3VecFace] | None:
    """The face as a subclass of SB3's `VecEnv` (made once); None when SB3 is not installed."""
    global _SB3_CLASS
    if _SB3_CLASS is None:
        try:
            base = importlib.import_module("stable_baselines3.common.vec_env.base_vec_env").VecEnv
        except ModuleNotFoundError as exc:
            if exc.name is not None and exc.name.split(".")[0] == "stable_baselines3":
                return None
            raise
        _SB3_CLASS = type("SB3VecEnv", (SB3VecFace, base), {"__module__": __name__})
    return _SB3_CLASS


def as_sb3_vec_env(vec: VectorEnv[Any, Any, Any]) -> SB3VecFace:
    """`vec` (SAME_STEP autoreset) with SB3's `VecEnv` interface; an SB3 `VecEnv` when SB3 is
    installed.

    Raises:
        ValueError: `vec`'s autoreset mode is not SAME_STEP.
    """
    cls = sb3_class() or SB3VecFace
    return cls(vec)


def unbatch_infos(infos: Mapping[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium's vector infos (arrays with `_name` masks, nested for dicts) as one dict per
    sub-environment."""
    listed: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for name, values in infos.items():
        if name.startswith("_"):
            continue
        mask = infos.get(f"_{name}")
        if isinstance(values, Mapping):
            for i, sub in enumerate(unbatch_infos(values, num_envs)):
                if mask is None or mask[i]:
                    listed[i][name] = sub
            continue
        for i in range(num_envs):
            if mask is None or mask[i]:
                listed[i][name] = values[i]
    return listed


def copy_observations(observations: Any) -> Any:
    """A copy SB3 may keep (the vector environment reuses its buffers)."""
    if isinstance(observations, dict):
        return {name: np.array(value) for name, value in observations.items()}
    if isinstance(observations, tuple):
        return tuple(np.array(value) for value in observations)
    return np.array(observations)


def tile_images(images: Sequence[np.ndarray]) -> np.ndarray:
    """N HxWxC pictures on a grid as close to square as can be, the rest black."""
    count, height, width, channels = np.asarray(images).shape
    rows = int(np.ceil(np.sqrt(count)))
    cols = int(np.ceil(count / rows))
    padded = list(images) + [np.zeros_like(images[0]) for _ in range(rows * cols - count)]
    grid = np.asarray(padded).reshape(rows, cols, height, width, channels).transpose(0, 2, 1, 3, 4)
    return grid.reshape(rows * height, cols * width, channels)
