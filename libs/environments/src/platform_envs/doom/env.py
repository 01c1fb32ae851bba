"""Doom (ViZDoom) as a Gymnasium environment whose snapshots replay the episode.

`make_env("defend_the_center")`: RGB screens and game variables, the scenario's own buttons as
a Discrete menu (or `action_set="full"`, the same 23 actions everywhere; see
`platform_envs.doom.actions`), `tics` engine tics (1/35 s each) per decision, headless and
silent. The last step of an episode says how it ended in `info["outcome"]`: "died", "exit" (a
whole level's exit reached), "completed" (a scenario's own goal, e.g. basic's monster shot) or
"timeout" (truncated: the scenario's own time limit, or `max_episode_steps`). Once the engine
has ended an episode it draws nothing more, so the observation of that last step is the last
frame drawn (screen, labels, depth) with the variables' final values (e.g. HEALTH <= 0).

Snapshots: a loaded ViZDoom save game plays on differently depending on what the engine did
before the load, so an environment pickles as its episode's seed, its reset options and the
actions taken so far, and unpickling starts the game on that seed and replays the actions
without drawing the frames in between (about 0.1 ms a step). With `labels=True` the replay
draws every frame (about 1.5 ms a step): the objects' ViZDoom `id`s depend on which frames
were drawn. `last_restore_seconds` says how long the last unpickling took. Restored runs
match uninterrupted ones step for step, screens included (see `platform_envs.doom.game` on why
the weapon does not bob).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from platform_envs.doom import actions
from platform_envs.doom.errors import DoomError, check_settings, import_vizdoom
from platform_envs.doom.game import GameSettings, acquire, config_buttons, config_variables, release
from platform_envs.doom.maps import choose_map, local_copy
from platform_envs.doom.observations import (
    objects_in_view,
    observation,
    observation_space,
    read_variables,
    variable_names,
)
from platform_envs.doom.scenarios import resolve_scenario

__all__ = ["DoomEnv", "make_env"]

TICS_PER_SECOND = 35  # Doom's game clock
DEFAULT_TICS = 4
SEED_RANGE = 2**32  # ViZDoom seeds are unsigned 32-bit

Observation = dict[str, Any]  # of np.ndarray: screen, variables[, labels][, depth]


def make_env(
    scenario: str = "basic",
    render_mode: str | None = "rgb_array",
    tics: int = DEFAULT_TICS,
    action_set: str = "scenario",
    labels: bool = False,
    depth: bool = False,
    variables: Sequence[str] = (),
    max_episode_steps: float | None = None,
    wad: str | os.PathLike[str] | None = None,
    doom_map: str | None = None,
) -> DoomEnv:
    """A Doom scenario as a Gymnasium environment (see the module docstring).

    Args:
        scenario: "basic", "defend_the_center", "health_gathering", "deathmatch" or
            "freedoom-e1m1" (Freedoom's first level, played whole).
        render_mode: "rgb_array" (render returns the screen) or None.
        tics: engine tics per decision (ViZDoom's `make_action(action, tics)`); the control
            rate is 35 / tics decisions per second.
        action_set: "scenario" (the scenario's buttons, one at a time, and NOOP) or "full"
            (the same 23 actions for every scenario).
        labels: add `obs["labels"]` (ViZDoom's per-pixel object map) and `info["labels"]` (the
            objects in view).
        depth: add `obs["depth"]` (the depth map, larger is further).
        variables: ViZDoom game variables observed after the scenario's own, e.g.
            ["POSITION_X", "POSITION_Y", "ANGLE"].
        max_episode_steps: steps after which an episode is truncated (outcome "timeout"),
            replacing the scenario's own time limit; None: the scenario's limit (in tics);
            `math.inf`: no limit at all.
        wad: the path of your own WAD file, whose map is played on top of Freedoom (Freedoom
            Phase 1 under `ExMy` maps, Phase 2 under `MAPxx` maps) with the scenario's buttons,
            variables and rewards; reaching its exit ends the episode with outcome "exit". On
            the platform: an uploaded WAD's id (`platform_sdk.upload_wad`).
        doom_map: the map to play, e.g. "MAP01": one of `wad`'s (default its first) or of the
            scenario's own WAD (e.g. "E1M2" on freedoom-e1m1).

    Raises:
        DoomError: an unknown scenario, action set or variable, a bad setting, a file that is
            not a WAD, a map the WAD lacks (the message lists its maps), or vizdoom not
            installed (the message names the install command).
    """
    return DoomEnv(
        scenario,
        render_mode=render_mode,
        tics=tics,
        action_set=action_set,
        labels=labels,
        depth=depth,
        variables=variables,
        max_episode_steps=max_episode_steps,
        wad=wad,
        doom_map=doom_map,
    )


class DoomEnv(gymnasium.Env[Observation, np.int64]):
    """A ViZDoom scenario; pickles as its episode's seed and actions. Built by `make_env`.

    Attributes:
        variable_names: the names of `obs["variables"]`, in order.
        last_restore_seconds: how long the last unpickling (start + replay) took; None if never.
    """

    observation_space: gymnasium.spaces.Dict

    def __init__(
        self,
        scenario: str,
        *,
        render_mode: str | None = "rgb_array",
        tics: int = DEFAULT_TICS,
        action_set: str = "scenario",
        labels: bool = False,
        depth: bool = False,
        variables: Sequence[str] = (),
        max_episode_steps: float | None = None,
        wad: str | os.PathLike[str] | None = None,
        doom_map: str | None = None,
    ) -> None:
        import_vizdoom()  # first: without vizdoom, the error names the install command
        found = resolve_scenario(scenario)
        name = found.name
        check_settings(name, render_mode, tics, action_set, labels, depth, max_episode_steps)
        chosen = choose_map(found, wad, doom_map)
        self.scenario = name
        self.level = found.level or chosen.wad is not None  # your own map ends at its exit
        self.wad, self.doom_map = chosen.wad, chosen.doom_map
        self.tics = tics
        self.render_mode = render_mode
        self._step_limit = max_episode_steps  # None: the engine's timeout ends episodes
        self.labels, self.depth = bool(labels), bool(depth)
        self.variable_names = variable_names(found.variables or config_variables(name), variables)
        self._actions = actions.action_set(action_set, config_buttons(name))
        self._settings = GameSettings(
            scenario=name,
            buttons=self._actions.buttons,
            variables=self.variable_names,
            labels=self.labels,
            depth=self.depth,
            timeout=None if max_episode_steps is None else 0,
            wad=chosen.wad,
            base_game=chosen.base_game,
            doom_map=chosen.doom_map if (chosen.wad is not None or doom_map is not None) else None,
        )
        self._game: Any = acquire(self._settings)
        self._screen_size = (int(self._game.get_screen_height()), int(self._game.get_screen_width()))
        timeout = int(self._game.get_episode_timeout())  # tics; the engine ends an episode after them
        if max_episode_steps is None and timeout > 0:
            max_episode_steps = math.ceil(timeout / tics)
        # the limit the spec reports: ours, or the scenario's own in steps
        self.max_episode_steps = max_episode_steps
        self.observation_space = observation_space(*self._screen_size, len(self.variable_names), self.labels, self.depth)
        self.action_space = gymnasium.spaces.Discrete(len(self._actions))
        rate = TICS_PER_SECOND / tics
        self.metadata = {
            "render_modes": ["rgb_array"],
            "render_fps": rate,
            "control_rate": rate,
            "action_names": list(self._actions.names),
            "scenario": name,
            "tics": tics,
            "action_set": action_set,
            "variable_names": list(self.variable_names),
            "doom_map": self.doom_map,
            "wad": os.path.basename(self.wad) if self.wad else None,
            "max_episode_steps": max_episode_steps if max_episode_steps != math.inf else None,
        }
        self.last_restore_seconds: float | None = None
        self._seed: int | None = None  # the episode's ViZDoom seed; None before the first reset
        self._options: dict[str, Any] = {}
        self._taken: list[int] = []  # the episode's actions so far
        self._over = True  # the episode ended (or none began): step needs a reset
        self._obs: Observation | None = None
        self._objects: list[dict[str, Any]] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode: ViZDoom seeded with `seed` (or one drawn from `np_random`)."""
        super().reset(seed=seed)
        game = self._live()
        episode_seed = seed % SEED_RANGE if seed is not None else int(self.np_random.integers(SEED_RANGE))
        game.set_seed(episode_seed)
        game.new_episode()
        self._seed, self._options, self._taken, self._over = episode_seed, dict(options or {}), [], False
        self._fetch(game)
        info: dict[str, Any] = {"variable_names": list(self.variable_names), "seed": episode_seed}
        if self.labels:
            info["labels"] = list(self._objects)
        return self._observation(), info

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Hold the action's buttons for `tics` tics."""
        game = self._live()
        index = self._index(action)
        if self._over:
            raise DoomError(f"{self.scenario}: the episode is over (or never began): reset first")
        reward = float(game.make_action(list(self._actions.presses[index]), self.tics))
        self._taken.append(index)
        self._fetch(game)
        info: dict[str, Any] = {}
        if self.labels:
            info["labels"] = list(self._objects)
        outcome = self._outcome(game)
        if outcome is not None:
            info["outcome"] = outcome
            self._over = True
        terminated = outcome in ("died", "exit", "completed")
        return self._observation(), reward, terminated, outcome == "timeout", info

    def render(self) -> np.ndarray | None:
        """The last screen drawn, (H, W, 3) uint8 RGB; None when render_mode is None."""
        if self.render_mode is None:
            gymnasium.logger.warn(f"{self.scenario}: render() without a render_mode; make it with 'rgb_array'")
            return None
        if self._obs is None:
            return np.zeros((*self._screen_size, 3), np.uint8)
        screen: np.ndarray = self._obs["screen"]
        return screen.copy()

    def close(self) -> None:
        """Hand the game back for reuse (idempotent)."""
        game, self._game = self._game, None
        if game is not None:
            release(self._settings, game)

    def __getstate__(self) -> dict[str, Any]:
        # The episode as seed + actions; the game, the last frame and the screens' Box (460 kB
        # of bounds: only its RNG is kept) are rebuilt.
        state = self.__dict__.copy()
        state["_game"] = state["_game"] is not None
        state["_observation_space_rngs"] = {k: s._np_random for k, s in self.observation_space.spaces.items()}
        for name in ("observation_space", "_obs", "_objects"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        started = time.perf_counter()
        state = dict(state)
        live = state.pop("_game")
        rngs = state.pop("_observation_space_rngs")
        self.__dict__.update(state)
        self._obs, self._objects, self._game = None, [], None
        if live:
            if self._settings.wad is not None:  # a snapshot from another session: this one's copy
                self._settings = dataclasses.replace(self._settings, wad=local_copy(self._settings.wad))
                self.wad = self._settings.wad
            self._game = acquire(self._settings)
        self.observation_space = observation_space(*self._screen_size, len(self.variable_names), self.labels, self.depth)
        for key, rng in rngs.items():
            self.observation_space.spaces[key]._np_random = rng
        if live and self._seed is not None:
            self._replay()
        self.last_restore_seconds = time.perf_counter() - started

    def _replay(self) -> None:
        """Start the episode on its seed and take its actions again, fetching only the frames
        the last observation needs (the last two: an episode's end draws none)."""
        game = self._live()
        game.set_seed(self._seed)
        game.new_episode()
        count = len(self._taken)
        if count == 0:
            self._fetch(game)
        for number, index in enumerate(self._taken):
            last = number >= count - 2
            game.set_action(list(self._actions.presses[index]))
            game.advance_action(self.tics, last or self.labels)  # with labels, draw every frame
            if last:
                self._fetch(game)

    def _fetch(self, game: Any) -> None:
        """Take the game's current frame as the last observation; after the episode's end,
        keep the last frame drawn and read the variables' final values."""
        state = None if game.is_episode_finished() else game.get_state()
        if state is not None:
            self._obs = observation(state, self.labels, self.depth)
            if self.labels:
                self._objects = objects_in_view(state)
        elif self._obs is not None:
            self._obs = {**self._obs, "variables": read_variables(game, self.variable_names)}

    def _outcome(self, game: Any) -> str | None:
        if game.is_episode_finished():
            if game.is_player_dead():
                return "died"
            if game.is_episode_timeout_reached():
                return "timeout"
            return "exit" if self.level else "completed"
        limit = self._step_limit
        if limit is not None and len(self._taken) >= limit:
            return "timeout"
        return None

    def _index(self, action: Any) -> int:
        try:
            index = int(action)
            valid = not isinstance(action, (bool, np.bool_)) and index == action and 0 <= index < len(self._actions)
        except (TypeError, ValueError):
            valid = False
        if not valid:
            raise DoomError(f"{self.scenario}: action {action!r} is not in {self.action_space}")
        return index

    def _observation(self) -> Observation:
        assert self._obs is not None
        return {key: value.copy() for key, value in self._obs.items()}

    def _live(self) -> Any:
        if self._game is None:
            raise DoomError(f"{self.scenario}: the environment is closed")
        return self._game
