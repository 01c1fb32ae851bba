"""Atari 2600 games (ale-py) as Gymnasium environments whose full state pickles.

`make_env("pong")` behaves like `gymnasium.make("ALE/Pong-v5")`: RGB screens, the game's minimal
action set, 4 frames per decision, sticky actions with probability 0.25 and a limit of 108,000
frames per episode. Trajectories are not bit-identical to ALE's own (the random draws differ),
but the dynamics match in distribution.

Sticky actions (Machado et al., 2018) are done here in Python, not inside ALE, because ALE's
saved state leaves out the previous action and a restored emulator would diverge. As in ALE v5,
at each emulated frame the previously executed action is repeated instead of the chosen one with
probability `repeat_action_probability`; the draws come from the environment's own `np_random`,
so `reset(seed=...)` seeds them and pickling captures them. Pickling an environment (what the
environment server's snapshots do) captures the emulator (`cloneState(include_rng=True)`), the
previous action, `np_random`, the step counter of the time limit and the last screen, so a
restored environment replays bit for bit.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from platform_envs.adapters.atari_emulator import AtariError, Emulator, acquire, release, resolve_game

__all__ = ["AtariEnv", "AtariError", "make_env"]

FRAMES_PER_SECOND = 60  # the Atari 2600's NTSC frame rate
MAX_FRAMES_PER_EPISODE = 108_000  # ALE v5's limit: 30 minutes of play
NOOP = 0  # ALE's action number of NOOP, the previous action after a reset


def make_env(
    game: str = "pong",
    frameskip: int = 4,
    repeat_action_probability: float = 0.25,
    full_action_space: bool = False,
    max_episode_steps: float | None = None,
    render_mode: str | None = "rgb_array",
    mode: int | None = None,
    difficulty: int | None = None,
) -> AtariEnv:
    """An Atari game as a Gymnasium environment (see the module docstring).

    Args:
        game: the game, e.g. "pong", "space-invaders" (any ROM that ships with ale-py).
        frameskip: emulated frames per decision; the control rate is 60 / frameskip per second.
        repeat_action_probability: per frame, the chance of repeating the previous action.
        full_action_space: all 18 joystick actions instead of the game's minimal set.
        max_episode_steps: steps after which an episode is truncated; None for ALE v5's
            108,000 frames, i.e. 108000 // frameskip steps (27,000 at frameskip 4); `math.inf`
            for no limit.
        render_mode: "rgb_array" (render returns the screen) or None.
        mode: a game mode (ALE's `setMode`), None for the game's default.
        difficulty: a difficulty (ALE's `setDifficulty`), None for the game's default.

    Raises:
        AtariError: an unknown game (the message lists valid ones), a bad setting, or ale-py
            not installed (the message names the install command).
    """
    return AtariEnv(
        game,
        frameskip=frameskip,
        repeat_action_probability=repeat_action_probability,
        full_action_space=full_action_space,
        max_episode_steps=max_episode_steps,
        render_mode=render_mode,
        mode=mode,
        difficulty=difficulty,
    )


class AtariEnv(gymnasium.Env[np.ndarray, np.int64]):
    """An Atari game with sticky actions done in Python; picklable. Built by `make_env`.

    Attributes:
        frames_emulated: frames emulated since the environment was made (diagnostic counter).
        frames_repeated: of those, frames where the previous action was repeated (sticky).
    """

    def __init__(
        self,
        game: str,
        *,
        frameskip: int = 4,
        repeat_action_probability: float = 0.25,
        full_action_space: bool = False,
        max_episode_steps: float | None = None,
        render_mode: str | None = "rgb_array",
        mode: int | None = None,
        difficulty: int | None = None,
    ) -> None:
        rom = resolve_game(game)
        if isinstance(frameskip, bool) or not isinstance(frameskip, int) or frameskip < 1:
            raise AtariError(f"{rom}: frameskip must be an int >= 1, not {frameskip!r}")
        try:
            p = float(repeat_action_probability)
        except (TypeError, ValueError):
            p = float("nan")
        if not 0.0 <= p <= 1.0:
            raise AtariError(
                f"{rom}: repeat_action_probability must be in [0, 1], not {repeat_action_probability!r}"
            )
        if max_episode_steps is None:
            max_episode_steps = max(1, MAX_FRAMES_PER_EPISODE // frameskip)
        if max_episode_steps != math.inf and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, int)
            or max_episode_steps < 1
        ):
            raise AtariError(
                f"{rom}: max_episode_steps must be an int >= 1, inf or None, not {max_episode_steps!r}"
            )
        if render_mode not in (None, "rgb_array"):
            raise AtariError(f"{rom}: render_mode must be 'rgb_array' or None, not {render_mode!r}")
        self.game = rom
        self.frameskip = frameskip
        self.repeat_action_probability = p
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self._mode, self._difficulty = mode, difficulty
        self._emulator: Emulator | None = acquire(rom, mode, difficulty)
        self._emulator.ale.restoreState(self._emulator.initial_state)
        emulator = self._emulator
        self._actions = emulator.legal_actions if full_action_space else emulator.minimal_actions
        height, width = emulator.ale.getScreenDims()
        self.observation_space = spaces.Box(0, 255, (height, width, 3), np.uint8)
        self.action_space = spaces.Discrete(len(self._actions))
        rate = FRAMES_PER_SECOND / frameskip
        self.metadata = {
            "render_modes": ["rgb_array"],
            "render_fps": rate,
            "control_rate": rate,
            "action_names": [emulator.action_names[a] for a in self._actions],
            "game": rom,
            "frameskip": frameskip,
            "repeat_action_probability": p,
            "max_episode_steps": None if max_episode_steps == math.inf else max_episode_steps,
        }
        self.frames_emulated = 0
        self.frames_repeated = 0
        self._previous_action = NOOP
        self._elapsed_steps = 0
        self._screen: np.ndarray = emulator.initial_screen.copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new episode from the emulator's state right after loading the game and resetting it.

        `seed` seeds `np_random`, which draws the sticky actions (the emulation itself is
        deterministic).
        """
        super().reset(seed=seed)
        emulator = self._live()
        emulator.ale.restoreState(emulator.initial_state)  # = a fresh emulator after reset_game
        self._previous_action = NOOP
        self._elapsed_steps = 0
        self._screen = emulator.initial_screen.copy()
        return self._screen.copy(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Emulate `frameskip` frames; per frame, the previous action sticks with probability p."""
        ale = self._live().ale
        try:
            index = int(action)
            valid = index == action and 0 <= index < len(self._actions)
        except (TypeError, ValueError):
            valid = False
        if not valid:
            raise AtariError(f"{self.game}: action {action!r} is not in {self.action_space}")
        chosen = self._actions[index]
        p = self.repeat_action_probability
        sticks = self.np_random.random(self.frameskip) < p if p > 0.0 else None
        reward = 0
        for frame in range(self.frameskip):
            if sticks is not None and sticks[frame]:
                self.frames_repeated += 1
            else:
                self._previous_action = chosen
            self.frames_emulated += 1
            reward += ale.act(self._previous_action)
            if ale.game_over(with_truncation=False):  # ALE emulates nothing once the game is over
                break
        self._elapsed_steps += 1
        self._screen = ale.getScreenRGB()
        terminated = bool(ale.game_over(with_truncation=False))
        truncated = self._elapsed_steps >= self.max_episode_steps
        return self._screen.copy(), float(reward), terminated, truncated, self._info()

    def render(self) -> np.ndarray | None:
        """The current screen, (210, 160, 3) uint8 RGB; None when render_mode is None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                f"{self.game}: render() without a render_mode; make it with render_mode='rgb_array'"
            )
            return None
        return self._screen.copy()

    @property
    def render_is_observation(self) -> bool:
        """`render()` is always exactly the last observation (both are the screen), so the
        environment server keeps a recorded frame as its observation without rendering it
        (`platform_sdk.server.instance.EnvInstance.later_frame`)."""
        return self.render_mode == "rgb_array"

    def close(self) -> None:
        """Hand the emulator back for reuse (idempotent)."""
        emulator, self._emulator = self._emulator, None
        if emulator is not None:
            release(emulator)

    def __getstate__(self) -> dict[str, Any]:
        # The Box of screens pickles as 400 kB of bounds: only its RNG is kept. The screen and
        # the emulator state are zlib-compressed (~115 kB -> ~10 kB, ~0.3 ms).
        state = self.__dict__.copy()
        emulator = state.pop("_emulator")
        state["_observation_space_rng"] = state.pop("observation_space")._np_random
        state["_screen"] = _pack(state["_screen"])
        state["_ale_state"] = (
            zlib.compress(emulator.ale.cloneState(include_rng=True).serialize(), 1)
            if emulator is not None
            else None
        )
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        ale_state = state.pop("_ale_state")
        space_rng = state.pop("_observation_space_rng")
        state["_screen"] = _unpack(state["_screen"])
        self.__dict__.update(state)
        self.observation_space = spaces.Box(0, 255, self._screen.shape, np.uint8)
        self.observation_space._np_random = space_rng
        self._emulator = None
        if ale_state is not None:
            emulator = acquire(self.game, self._mode, self._difficulty)
            emulator.restore_bytes(zlib.decompress(ale_state))
            self._emulator = emulator

    def _live(self) -> Emulator:
        if self._emulator is None:
            raise AtariError(f"{self.game}: the environment is closed")
        return self._emulator

    def _info(self) -> dict[str, Any]:
        ale = self._live().ale
        return {
            "lives": int(ale.lives()),
            "episode_frame_number": int(ale.getEpisodeFrameNumber()),
        }


def _pack(screen: np.ndarray) -> tuple[tuple[int, ...], bytes]:
    return screen.shape, zlib.compress(np.ascontiguousarray(screen).tobytes(), 1)


def _unpack(packed: tuple[tuple[int, ...], bytes]) -> np.ndarray:
    shape, data = packed
    return np.frombuffer(zlib.decompress(data), dtype=np.uint8).reshape(shape).copy()
