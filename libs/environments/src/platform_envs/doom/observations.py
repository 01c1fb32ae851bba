"""What a Doom environment observes: the observation space, observations from ViZDoom game
states, the objects in view, and the game variables asked for by name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium import spaces

from platform_envs.doom.errors import DoomError, import_vizdoom


def variable_names(first: Iterable[str], extra: Iterable[str]) -> tuple[str, ...]:
    """The observed variables: `first` (the scenario's), then each of `extra` not already there.

    Raises:
        DoomError: a name in `extra` that is no ViZDoom GameVariable (the message lists them).
    """
    valid = list(import_vizdoom().GameVariable.__members__)
    if isinstance(extra, str):
        extra = [extra]
    names = list(first)
    for name in extra:
        key = name.strip().upper() if isinstance(name, str) else name
        if key not in valid:
            raise DoomError(f"unknown Doom game variable {name!r}: valid are {', '.join(valid)}")
        if key not in names:
            names.append(key)
    return tuple(names)


def observation_space(height: int, width: int, n_variables: int, labels: bool, depth: bool) -> spaces.Dict:
    """Dict(screen (H, W, 3) uint8 RGB, variables (n,) float32[, labels (H, W) uint8][, depth (H, W) uint8])."""
    entries: dict[str, spaces.Space[Any]] = {
        "screen": spaces.Box(0, 255, (height, width, 3), np.uint8),
        "variables": spaces.Box(-np.inf, np.inf, (n_variables,), np.float32),
    }
    if labels:
        entries["labels"] = spaces.Box(0, 255, (height, width), np.uint8)
    if depth:
        entries["depth"] = spaces.Box(0, 255, (height, width), np.uint8)
    return spaces.Dict(entries)


def observation(state: Any, labels: bool, depth: bool) -> dict[str, np.ndarray]:
    """The observation of a ViZDoom `GameState` (buffers copied)."""
    obs: dict[str, np.ndarray] = {
        "screen": np.array(state.screen_buffer, dtype=np.uint8),
        "variables": np.asarray(state.game_variables, dtype=np.float32).copy(),
    }
    if labels:
        obs["labels"] = np.array(state.labels_buffer, dtype=np.uint8)
    if depth:
        obs["depth"] = np.array(state.depth_buffer, dtype=np.uint8)
    return obs


def objects_in_view(state: Any) -> list[dict[str, Any]]:
    """The labelled objects of a ViZDoom `GameState`, one dict each: value (as in the labels
    map), id, name, bounding box x, y, width, height (pixels) and map position (map units)."""
    return [
        {
            "value": int(label.value),
            "id": int(label.object_id),
            "name": str(label.object_name),
            "x": int(label.x),
            "y": int(label.y),
            "width": int(label.width),
            "height": int(label.height),
            "object_position_x": float(label.object_position_x),
            "object_position_y": float(label.object_position_y),
            "object_position_z": float(label.object_position_z),
        }
        for label in state.labels
    ]


def read_variables(game: Any, names: Iterable[str]) -> np.ndarray:
    """The current values of the named game variables, read from the game (when there is no state)."""
    vzd = import_vizdoom()
    return np.array([game.get_game_variable(vzd.GameVariable.__members__[n]) for n in names], dtype=np.float32)
