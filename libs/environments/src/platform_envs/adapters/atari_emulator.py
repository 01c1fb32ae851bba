"""The ALE emulators behind `platform_envs.adapters.atari`: game names, loading, a small pool.

Loading a ROM takes ~90 ms, restoring an emulator state ~0.2 ms. Restoring a snapshot builds a
new environment (unpickling) before the one it replaces is closed, so closed environments hand
their emulator back to a per-process pool and the next unpickled environment of the same game
reuses it: a restore then costs a state copy, not a ROM load.

ALE is always created with `repeat_action_probability=0` (sticky actions are done in Python by
the environment) and a fixed `random_seed`: with stickiness off, the emulation does not draw
from ALE's generator, and `initial_state` (taken right after loading) includes it anyway.
"""

from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass
from typing import Any

from platform_envs.errors import EnvError

INSTALL_COMMAND = "pip install 'platform-envs[atari]'"
ALE_RANDOM_SEED = 0
# Emulators kept per (game, mode, difficulty) for reuse; more are simply dropped.
POOL_SIZE = 2


class AtariError(EnvError, ValueError):
    """A bad Atari game name or setting, a missing ale-py, or a closed Atari environment."""


@dataclass(eq=False)
class Emulator:
    """One loaded ALE with the state it had right after loading.

    Attributes:
        game: the ROM id, e.g. "space_invaders".
        mode: the game mode set at load (None: the ROM's default).
        difficulty: the difficulty set at load (None: the ROM's default).
        ale: the `ale_py.ALEInterface`.
        initial_state: `ale.cloneState(include_rng=True)` right after loading and `reset_game`.
        initial_screen: the screen in `initial_state` (restoring a state leaves the screen as is).
        minimal_actions: the game's minimal action set, as ALE action numbers.
        legal_actions: all 18 ALE actions, as numbers.
        action_names: ALE's name of every action number (index = number), e.g. "NOOP".
    """

    game: str
    mode: int | None
    difficulty: int | None
    ale: Any
    initial_state: Any
    initial_screen: Any
    minimal_actions: tuple[int, ...]
    legal_actions: tuple[int, ...]
    action_names: tuple[str, ...]

    def restore_bytes(self, data: bytes) -> None:
        """Put the emulator in the state serialized by `ale.cloneState(...).serialize()`."""
        ale_py = import_ale()
        self.ale.restoreState(ale_py.ALEState(data))


_pool: dict[tuple[str, int | None, int | None], list[Emulator]] = {}
_pool_lock = threading.Lock()


def import_ale() -> Any:
    """The `ale_py` module.

    Raises:
        AtariError: ale-py is not installed; the message names the install command.
    """
    try:
        import ale_py
    except ImportError as exc:
        raise AtariError(
            f"Atari games need ale-py, which is not installed: {INSTALL_COMMAND} ({exc})"
        ) from None
    return ale_py


def game_ids() -> list[str]:
    """Every game whose ROM ships with the installed ale-py, e.g. ["adventure", "air_raid", ...]."""
    from ale_py import roms

    return sorted(roms.get_all_rom_ids())


def resolve_game(name: str) -> str:
    """The ROM id of `name`; "space-invaders", "SpaceInvaders" and "space_invaders" all work.

    Raises:
        AtariError: no such game; the message lists some valid ones (and near matches).
    """
    import_ale()
    if not isinstance(name, str) or not name.strip():
        raise AtariError(f"the Atari game must be a non-empty name, not {name!r}")
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    rom = re.sub(r"[\s\-]+", "_", text).lower()
    valid = game_ids()
    if rom in valid:
        return rom
    close = difflib.get_close_matches(rom, valid, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    popular = "pong, breakout, space_invaders, seaquest, ms_pacman, qbert"
    raise AtariError(
        f"unknown Atari game {name!r}: {hint}valid games include {popular} "
        f"({len(valid)} in all: ale_py.roms.get_all_rom_ids())"
    )


def acquire(game: str, mode: int | None = None, difficulty: int | None = None) -> Emulator:
    """An emulator of `game` (a ROM id from `resolve_game`), from the pool or freshly loaded.

    Its state is unspecified: restore `initial_state` or a snapshot before using it.

    Raises:
        AtariError: the mode or difficulty is not one the game has.
    """
    with _pool_lock:
        free = _pool.get((game, mode, difficulty))
        if free:
            return free.pop()
    return _load(game, mode, difficulty)


def release(emulator: Emulator) -> None:
    """Hand an emulator back for reuse; its environment must not touch it again."""
    with _pool_lock:
        free = _pool.setdefault((emulator.game, emulator.mode, emulator.difficulty), [])
        if len(free) < POOL_SIZE:
            free.append(emulator)


def _load(game: str, mode: int | None, difficulty: int | None) -> Emulator:
    ale_py = import_ale()
    from ale_py import roms

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("random_seed", ALE_RANDOM_SEED)
    ale.loadROM(roms.get_rom_path(game))
    for what, value, available, setter in (
        ("mode", mode, ale.getAvailableModes, ale.setMode),
        ("difficulty", difficulty, ale.getAvailableDifficulties, ale.setDifficulty),
    ):
        if value is not None:
            options = sorted(int(v) for v in available())
            if value not in options:
                raise AtariError(f"{game} has no {what} {value!r}; its {what}s are {options}")
            setter(value)
    ale.reset_game()
    return Emulator(
        game=game,
        mode=mode,
        difficulty=difficulty,
        ale=ale,
        initial_state=ale.cloneState(include_rng=True),
        initial_screen=ale.getScreenRGB(),
        minimal_actions=tuple(a.value for a in ale.getMinimalActionSet()),
        legal_actions=tuple(a.value for a in ale.getLegalActionSet()),
        action_names=tuple(ale_py.Action(n).name for n in range(len(ale_py.Action.__members__))),
    )
