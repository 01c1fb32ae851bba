"""The Doom environments' action sets: which buttons the game has and what each Discrete
action presses.

- "scenario" (the default): the scenario's own buttons as a menu, action 0 "NOOP" (press
  nothing), then one action per button in its config's order, pressing that button alone.
  Modifier buttons (SPEED, STRAFE: alone they do nothing) and delta buttons (analog turns and
  moves) of the config are left out. So basic is NOOP, MOVE_LEFT, MOVE_RIGHT, ATTACK (its
  left and right strafe) and defend_the_center NOOP, TURN_LEFT, TURN_RIGHT, ATTACK.
- "full": the same 23 actions for every scenario: the 18 combinations of (MOVE_FORWARD,
  MOVE_BACKWARD, none) x (TURN_LEFT, TURN_RIGHT, none) x (ATTACK, none), in that nesting
  (action 0 is MOVE_FORWARD+TURN_LEFT+ATTACK, 17 is NOOP), then USE, MOVE_LEFT (strafe left),
  MOVE_RIGHT (strafe right), SELECT_NEXT_WEAPON and SELECT_PREV_WEAPON. Buttons the scenario
  lacks are added, so some scenarios become easier than standard.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from platform_envs.doom.errors import DoomError

ACTION_SETS = ("scenario", "full")
NOOP = "NOOP"
MODIFIER_BUTTONS = frozenset({"SPEED", "STRAFE"})
FULL_MOVES = ("MOVE_FORWARD", "MOVE_BACKWARD", None)
FULL_TURNS = ("TURN_LEFT", "TURN_RIGHT", None)
FULL_FIRE = ("ATTACK", None)
FULL_EXTRAS = ("USE", "MOVE_LEFT", "MOVE_RIGHT", "SELECT_NEXT_WEAPON", "SELECT_PREV_WEAPON")
FULL_BUTTONS = ("MOVE_FORWARD", "MOVE_BACKWARD", "TURN_LEFT", "TURN_RIGHT", "ATTACK", *FULL_EXTRAS)


@dataclass(frozen=True)
class ActionSet:
    """Discrete actions over a game's buttons.

    Attributes:
        buttons: the game's available buttons (ViZDoom Button names), in order.
        names: each action's name, e.g. "MOVE_FORWARD+TURN_LEFT" or "NOOP".
        presses: each action's button values, one per button (1.0 pressed, 0.0 not).
    """

    buttons: tuple[str, ...]
    names: tuple[str, ...]
    presses: tuple[tuple[float, ...], ...]

    def __len__(self) -> int:
        return len(self.names)


def action_set(kind: str, config_buttons: tuple[str, ...]) -> ActionSet:
    """The action set `kind` ("scenario" or "full") of a scenario whose config has `config_buttons`.

    Raises:
        DoomError: an unknown kind.
    """
    if kind == "scenario":
        buttons = tuple(b for b in config_buttons if b not in MODIFIER_BUTTONS and not b.endswith("_DELTA"))
        combos: list[tuple[str, ...]] = [(), *((button,) for button in buttons)]
    elif kind == "full":
        buttons = FULL_BUTTONS
        combos = [
            tuple(b for b in combo if b is not None)
            for combo in itertools.product(FULL_MOVES, FULL_TURNS, FULL_FIRE)
        ]
        combos += [(button,) for button in FULL_EXTRAS]
    else:
        raise DoomError(f"action_set must be one of {', '.join(ACTION_SETS)}, not {kind!r}")
    names = tuple("+".join(combo) or NOOP for combo in combos)
    presses = tuple(tuple(1.0 if b in combo else 0.0 for b in buttons) for combo in combos)
    return ActionSet(buttons, names, presses)
