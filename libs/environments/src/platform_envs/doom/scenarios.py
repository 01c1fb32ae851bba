"""The Doom scenarios `platform_envs.doom.make_env` plays: ViZDoom's bundled scenarios and a
whole Freedoom level.

A scenario is a ViZDoom config (`.cfg`, shipped in the vizdoom wheel under `scenarios/`) plus,
for a whole level, the map to start on. Scenarios have their own goal (basic: shoot the
monster) and their own buttons and game variables (from the config); whole levels end at the
map's exit and report `LEVEL_VARIABLES`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from platform_envs.doom.errors import DoomError

# The variables every whole level reports, in this order (ViZDoom GameVariable names).
LEVEL_VARIABLES = ("HEALTH", "ARMOR", "SELECTED_WEAPON_AMMO", "KILLCOUNT")


@dataclass(frozen=True)
class Scenario:
    """One playable scenario.

    Attributes:
        name: the name `make_env(scenario=...)` takes, e.g. "defend_the_center".
        config: the ViZDoom config file in vizdoom's `scenarios/` folder.
        level: True for a whole level (ends at its exit: outcome "exit"), False for a scenario
            with a goal of its own (outcome "completed").
        doom_map: the map to play (None: the config's).
        variables: the game variables reported first (None: the config's).
        description: one line for the catalog.
    """

    name: str
    config: str
    level: bool
    doom_map: str | None
    variables: tuple[str, ...] | None
    description: str


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "basic", "basic.cfg", False, None, None,
            "ViZDoom Basic: a monster stands on the far wall of a square room; strafe left or right "
            "and shoot it. -1 per tic, +101 for the hit that kills it, -5 per missed shot.",
        ),
        Scenario(
            "defend_the_center", "defend_the_center.cfg", False, None, None,
            "ViZDoom Defend the Center: stand in the middle of a round arena, turn and shoot the "
            "monsters closing in from all sides with limited ammo; +1 per kill, -1 for dying.",
        ),
        Scenario(
            "health_gathering", "health_gathering.cfg", False, None, None,
            "ViZDoom Health Gathering: the floor is acid and health drains; walk and turn to pick "
            "up medkits and stay alive. +1 per tic alive, -100 for dying.",
        ),
        Scenario(
            "deathmatch", "deathmatch.cfg", False, None, None,
            "ViZDoom Deathmatch: an arena of monsters with weapons, ammo and health to pick up; "
            "kill as many as you can before the time runs out.",
        ),
        Scenario(
            "freedoom-e1m1", "freedoom1.cfg", True, "E1M1", LEVEL_VARIABLES,
            "Freedoom Phase 1, level E1M1 (the free stand-in for Doom's first level): find the "
            "way through doors and monsters to the exit. +1 for reaching it.",
        ),
    )
}


def resolve_scenario(name: str) -> Scenario:
    """The scenario named `name` ("defend-the-center" and "defend_the_center" both work).

    Raises:
        DoomError: no such scenario; the message lists the valid ones.
    """
    if not isinstance(name, str):
        raise DoomError(f"the Doom scenario must be a name, not {name!r}; valid: {', '.join(SCENARIOS)}")
    wanted = _key(name)
    for scenario in SCENARIOS.values():
        if _key(scenario.name) == wanted:
            return scenario
    close = difflib.get_close_matches(name, list(SCENARIOS), n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise DoomError(f"unknown Doom scenario {name!r}: {hint}valid: {', '.join(SCENARIOS)}")


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")
