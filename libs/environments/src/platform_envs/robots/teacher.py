"""The pick and place teacher: a scripted expert that suggests the next hand action.

It plans from the environment's true state (`TeacherView`: the hand's target and position, the
gripper, the block, the fingers' contacts, the target bin), never from the observation the
agent sees, so world changes to the sensors do not mislead it. Its suggestion is a pure
function of that state, hence deterministic, and it keeps no memory of its own: a restored
snapshot gets the same suggestions as the original did.

The phases, each chosen afresh from the state at every decision:

1. above block: with the gripper open and the block not held, rise to the travel height, then
   move over the block (at the travel height);
2. descend: lower the hand until its site (between the fingertips) is at the block's centre;
3. close: once the hand has settled there, close the gripper; wait while the fingers close
   (the gripper reopens when they shut on nothing or the hand has drifted off the block);
4. lift: with both fingers on the block, rise to the carry height (the block clear of the
   bins' rims);
5. above target bin: move over the bin under the green ball;
6. descend: lower the block to just above the bin's floor;
7. open: once the hand has settled there, open the gripper;
8. retreat: with the block in the target bin and the fingers off it, rise to the travel
   height and stay there.

A block that falls outside the target bin is picked up again from wherever it lies. Each phase
gives a wanted move of the hand's target; `HandActions` turns it into an action of the
session's space: hand_steps levels (the level whose move is nearest the wanted one, per axis)
or continuous hand values (the move in units of hand_step, clipped to [-1, 1]).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from platform_envs.robots.pick_place_scene import BIN_FLOOR_HALF, BIN_HEIGHT, BLOCK_HALF_SIZE

TRAVEL_CLEARANCE = 0.06  # m the hand travels above the bins' rims with an open gripper
CARRY_CLEARANCE = 0.04  # m the carried block's bottom stays above the rims
RELEASE_CLEARANCE = 0.01  # m between the block's bottom and the bin floor when it is let go
BIN_AIM = 0.015  # m: the block counts as over the bin this close to its centre (0.045 of slack)
SETTLED = 0.008  # m: the hand is settled when it is this close to its target
ON_BLOCK = 0.02  # m: the hand counts as on the block when its site is this close to its centre
CLOSED_ON_NOTHING = 0.1  # gripper opening (0 closed, 1 open) below which the fingers hold nothing
CONTINUOUS_TOLERANCE = 0.002  # m: how close the continuous teacher lines the hand up


@dataclasses.dataclass(frozen=True)
class TeacherView:
    """The true state the teacher plans from (world frame, metres).

    Attributes:
        hand_target: where hand control is moving the hand (the controller's target).
        hand_position: where the hand site is.
        gripper_closed: whether the gripper is commanded closed.
        gripper_opening: how open the fingers are, 0 (closed) to 1 (fully open).
        fingers_touching: for each finger, whether it touches the block.
        block_position: the block's centre.
        target_bin_center: the centre of the bin the block must go in, at its base.
        block_in_target_bin: whether the block lies inside the target bin.
    """

    hand_target: np.ndarray
    hand_position: np.ndarray
    gripper_closed: bool
    gripper_opening: float
    fingers_touching: tuple[bool, ...]
    block_position: np.ndarray
    target_bin_center: np.ndarray
    block_in_target_bin: bool

    @property
    def holding(self) -> bool:
        """Whether the gripper is closed on the block (every finger touches it)."""
        return self.gripper_closed and all(self.fingers_touching)


@dataclasses.dataclass(frozen=True)
class Suggestion:
    """A wanted move of the hand's target (m, (3,)), the gripper command, and the phase's name."""

    move: np.ndarray
    close: bool
    phase: str


class HandActions:
    """Turns a wanted move into an action of a hand-controlled session's space.

    Args:
        control: "hand_steps" or "hand".
        hand_step: the largest move of one decision along each axis (m).
        hand_levels: the number of levels per axis (hand_steps).
    """

    def __init__(self, control: str, hand_step: float, hand_levels: int) -> None:
        if control not in ("hand_steps", "hand"):
            raise ValueError(f"the teacher suggests hand actions; control {control!r} has none")
        self.control = control
        self.hand_step = float(hand_step)
        self.middle = (int(hand_levels) - 1) // 2
        # the smallest move a decision can make: how finely the hand can be lined up
        self.resolution = self.hand_step / self.middle if control == "hand_steps" else 0.0

    @property
    def tolerance(self) -> float:
        """How far (m, per axis) a target may be from a goal and count as on it."""
        if self.control == "hand_steps":
            return self.resolution / 2 + 1e-9
        return CONTINUOUS_TOLERANCE

    def action(self, suggestion: Suggestion) -> list[int] | list[float]:
        """The action that makes the move nearest `suggestion.move` with its gripper command."""
        fraction = np.clip(suggestion.move / self.hand_step, -1.0, 1.0)
        if self.control == "hand_steps":
            levels = [int(v) for v in self.middle + np.rint(fraction * self.middle)]
            return [*levels, int(suggestion.close)]
        return [*(float(v) for v in fraction), float(suggestion.close)]


class PickPlaceTeacher:
    """The scripted expert of one pick and place scene (see the module docstring).

    Args:
        actions: the session's hand action form.
        low, high: the corners of the box the hand's target is kept in (the workspace).
    """

    def __init__(self, actions: HandActions, low: np.ndarray, high: np.ndarray) -> None:
        self.actions = actions
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        # heights above a bin's base (the table's top where the scene puts the bins)
        self.travel_height = BIN_HEIGHT + TRAVEL_CLEARANCE
        self.carry_height = BIN_HEIGHT + CARRY_CLEARANCE + BLOCK_HALF_SIZE
        self.release_height = 2 * BIN_FLOOR_HALF + RELEASE_CLEARANCE + BLOCK_HALF_SIZE

    def action(self, view: TeacherView) -> list[int] | list[float]:
        """The suggested next action for `view`, in the session's action form."""
        return self.actions.action(self.suggest(view))

    def suggest(self, view: TeacherView) -> Suggestion:
        """The phase's wanted move and gripper command for `view`."""
        if view.holding:
            return self._carry(view)
        if view.gripper_closed:
            return self._closing(view)
        if view.block_in_target_bin:
            return self._retreat(view)
        return self._approach(view)

    # phases

    def _approach(self, view: TeacherView) -> Suggestion:
        block = view.block_position
        grasp = self._reachable(np.array([block[0], block[1], block[2]]))
        if not self._over(view.hand_target, grasp):
            travel_z = view.target_bin_center[2] + self.travel_height
            return self._travel(view, grasp, travel_z, close=False, phase="above block")
        if not self._at(view.hand_target[2], grasp[2]):
            return Suggestion(self._towards(view.hand_target, grasp), False, "descend to block")
        if not self._settled(view):
            return Suggestion(self._towards(view.hand_target, grasp), False, "descend to block")
        return Suggestion(np.zeros(3), True, "close")

    def _closing(self, view: TeacherView) -> Suggestion:
        on_block = np.linalg.norm(view.hand_position - view.block_position) <= ON_BLOCK
        if on_block and view.gripper_opening > CLOSED_ON_NOTHING:
            return Suggestion(np.zeros(3), True, "close")
        return Suggestion(np.zeros(3), False, "open after a missed grasp")

    def _carry(self, view: TeacherView) -> Suggestion:
        base = view.target_bin_center
        # aim the block, not the hand, at the bin: the grasp may hold it off the hand's site
        grip = view.hand_position - view.block_position
        drop = self._reachable(base + [0.0, 0.0, self.release_height] + grip)
        # the grip's offset wavers as the hand lags its target: a bin's slack, not the finest
        # move, says when the block is over it (else the teacher dithers at the boundary)
        over = np.abs(view.hand_target[:2] - drop[:2]) <= max(self.actions.tolerance, BIN_AIM)
        if not over.all():
            carry_z = base[2] + self.carry_height + grip[2]
            return self._travel(view, drop, carry_z, close=True, phase="above target bin")
        if not self._at(view.hand_target[2], drop[2]) or not self._settled(view):
            down = view.hand_target.copy()
            down[2] = drop[2]
            return Suggestion(self._towards(view.hand_target, down), True, "descend to bin")
        return Suggestion(np.zeros(3), False, "open")

    def _retreat(self, view: TeacherView) -> Suggestion:
        if any(view.fingers_touching):
            return Suggestion(np.zeros(3), False, "open")
        goal = view.hand_target.copy()
        goal[2] = view.target_bin_center[2] + self.travel_height
        return Suggestion(self._towards(view.hand_target, self._reachable(goal)), False, "retreat")

    # moves

    def _travel(
        self, view: TeacherView, goal: np.ndarray, height: float, *, close: bool, phase: str
    ) -> Suggestion:
        """Rise to `height`, then move over `goal` at that height."""
        target = view.hand_target
        height = float(np.clip(height, self.low[2], self.high[2]))
        if target[2] < height - self.actions.tolerance:
            # straight up first: the fingers or the carried block clear the block and the rims
            up = target.copy()
            up[2] = height
            return Suggestion(self._towards(target, up), close, phase)
        above = np.array([goal[0], goal[1], height])
        return Suggestion(self._towards(target, above), close, phase)

    def _towards(self, target: np.ndarray, goal: np.ndarray) -> np.ndarray:
        move = np.asarray(goal - target, dtype=np.float64)
        move[np.abs(move) <= self.actions.tolerance] = 0.0
        return move

    def _over(self, target: np.ndarray, goal: np.ndarray) -> bool:
        return bool(np.all(np.abs(target[:2] - goal[:2]) <= self.actions.tolerance))

    def _at(self, value: float, goal: float) -> bool:
        return abs(value - goal) <= self.actions.tolerance

    def _settled(self, view: TeacherView) -> bool:
        return bool(np.linalg.norm(view.hand_position - view.hand_target) <= SETTLED)

    def _reachable(self, goal: np.ndarray) -> np.ndarray:
        return np.asarray(np.clip(goal, self.low, self.high), dtype=np.float64)


def teacher_for(settings: Any, low: np.ndarray, high: np.ndarray) -> PickPlaceTeacher:
    """The teacher for a session with hand `settings` (`hand_control.HandSettings`) whose hand's
    target is kept between `low` and `high`."""
    actions = HandActions(settings.control, settings.hand_step, settings.hand_levels)
    return PickPlaceTeacher(actions, low, high)
