"""ViZDoom games for `platform_envs.doom`: configured headless from a scenario, and pooled.

A game starts in ~0.2 s. Restoring a snapshot unpickles a new environment before the one it
replaces is closed, so closed environments hand their game back to a per-process pool and the
next environment with the same settings reuses it.

Every game runs with `movebob 0`: the engine eases the weapon's bob toward its target each time
it draws a frame, so with bobbing on, the picture (not the play) depends on how many frames were
drawn before, in this episode and in earlier ones. Without it, a game's screens depend only on
the episode's seed and actions, which is what lets a snapshot replay without drawing, and a
reused game play as a new one. Whole levels draw the minimal HUD (health, ammo) for the same
reason: the status bar's face animates as it is drawn. The engine's own files (its .ini, screenshots, saves) go to a
temporary folder of this process instead of the working directory: each game gets an .ini
written here that names no `./_vizdoom` folder (the engine's default one does, and creates it).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from platform_envs.doom import engine_watchdog
from platform_envs.doom.errors import import_vizdoom
from platform_envs.doom.scenarios import SCENARIOS

# Games kept per settings for reuse; more are closed.
POOL_SIZE = 2
# The whole levels' difficulty (ViZDoom's doom_skill 1-5; 3 is Doom's "Hurt me plenty").
LEVEL_SKILL = 3


@dataclass(frozen=True)
class GameSettings:
    """What a game is started with; games with equal settings are interchangeable.

    Attributes:
        scenario: a `SCENARIOS` name.
        buttons: the available buttons, ViZDoom Button names in order.
        variables: the available game variables, ViZDoom GameVariable names in order.
        labels: the labels buffer (and the objects in view) on.
        depth: the depth buffer on.
        timeout: the engine's episode timeout in tics; None: the scenario config's; 0: none.
        wad: a WAD file whose map is played on top of `base_game` (None: the scenario's own).
        base_game: the Freedoom IWAD under `wad`, in vizdoom's folder.
        doom_map: the map to start (None: the scenario's or its config's).
    """

    scenario: str
    buttons: tuple[str, ...]
    variables: tuple[str, ...]
    labels: bool
    depth: bool
    timeout: int | None
    wad: str | None = None
    base_game: str | None = None
    doom_map: str | None = None


_pool: dict[GameSettings, list[Any]] = {}
_pool_lock = threading.Lock()
_files: str | None = None
_started = itertools.count()
_running: weakref.WeakSet[Any] = weakref.WeakSet()  # every game started, to close at exit
_engines: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # a game's engine process
# The engine's .ini for a game: its default without the `./_vizdoom` paths; {folder} is ours.
INI_TEMPLATE = "[IWADSearch.Directories]\nPath=.\n\n[FileSearch.Directories]\n\n" + "".join(
    f"[{game}.AutoExec]\nPath={{folder}}/autoexec.cfg\n\n" for game in ("Doom", "Heretic", "Hexen", "Strife", "Chex")
)


@functools.lru_cache(maxsize=None)
def config_buttons(scenario: str) -> tuple[str, ...]:
    """The buttons of a scenario's ViZDoom config, in its order."""
    game = _configured(scenario)
    return tuple(button.name for button in game.get_available_buttons())


@functools.lru_cache(maxsize=None)
def config_variables(scenario: str) -> tuple[str, ...]:
    """The game variables of a scenario's ViZDoom config, in its order."""
    game = _configured(scenario)
    return tuple(variable.name for variable in game.get_available_game_variables())


def acquire(settings: GameSettings) -> Any:
    """A started `vizdoom.DoomGame` with `settings`, from the pool or new; its episode state
    is unspecified (start one with `set_seed` and `new_episode`)."""
    with _pool_lock:
        free = _pool.get(settings)
        if free:
            return free.pop()
    return start(settings)


def release(settings: GameSettings, game: Any) -> None:
    """Hand a game back for reuse (or close it when the pool is full)."""
    with _pool_lock:
        free = _pool.setdefault(settings, [])
        if len(free) < POOL_SIZE:
            free.append(game)
            return
    close(game)


def close(game: Any) -> None:
    """Stop a game and its engine process (which the watchdog then leaves alone)."""
    game.close()
    pid = _engines.pop(game, None)
    if pid is not None:
        engine_watchdog.forget(pid)


def start(settings: GameSettings) -> Any:
    """A new game with `settings`, started (`init`), headless and silent."""
    vzd = import_vizdoom()
    game = _configured(settings.scenario)
    if settings.wad is not None:
        game.set_doom_game_path(os.path.join(vzd.root_path, settings.base_game or "freedoom2.wad"))
        game.set_doom_scenario_path(settings.wad)
    if settings.doom_map is not None:
        game.set_doom_map(settings.doom_map)
    game.set_window_visible(False)
    game.set_sound_enabled(False)
    game.set_audio_buffer_enabled(False)
    game.set_automap_buffer_enabled(False)
    game.set_mode(vzd.Mode.PLAYER)
    game.set_screen_format(vzd.ScreenFormat.RGB24)
    game.set_labels_buffer_enabled(settings.labels)
    game.set_depth_buffer_enabled(settings.depth)
    game.set_available_buttons([vzd.Button.__members__[name] for name in settings.buttons])
    game.set_available_game_variables([vzd.GameVariable.__members__[name] for name in settings.variables])
    if settings.timeout is not None:
        game.set_episode_timeout(settings.timeout)
    files = _engine_files()
    ini = os.path.join(files, f"game-{next(_started)}.ini")
    with open(ini, "w", encoding="utf-8") as file:
        file.write(INI_TEMPLATE.format(folder=files))
    game.set_doom_config_path(ini)
    game.add_game_args(f"+screenshot_dir {files} -savedir {files} +movebob 0")
    game.init()
    _running.add(game)
    pid = engine_watchdog.engine_pid(ini)
    if pid is not None:  # its engine dies with this process, however that ends
        engine_watchdog.watch(pid)
        _engines[game] = pid
    return game


def _configured(name: str) -> Any:
    """A game (not started) with the scenario's config loaded and its map and skill set."""
    vzd = import_vizdoom()
    scenario = SCENARIOS[name]
    game = vzd.DoomGame()
    game.load_config(os.path.join(vzd.scenarios_path, scenario.config))
    if scenario.level:
        wad = os.path.splitext(scenario.config)[0] + ".wad"  # freedoom1.cfg plays freedoom1.wad
        game.set_doom_game_path(os.path.join(vzd.root_path, wad))
        game.set_doom_skill(LEVEL_SKILL)
        game.set_render_minimal_hud(True)
    if scenario.doom_map is not None:
        game.set_doom_map(scenario.doom_map)
    return game


def _engine_files() -> str:
    global _files
    with _pool_lock:
        if _files is None:
            _files = tempfile.mkdtemp(prefix="platform-vizdoom-")
            atexit.register(_clean_up, _files)
        return _files


def _clean_up(folder: str) -> None:
    """At exit: close the games still running (each writes its .ini), then remove the folder."""
    with _pool_lock:
        _pool.clear()
        games = list(_running)
    for game in games:
        close(game)
    shutil.rmtree(folder, ignore_errors=True)
