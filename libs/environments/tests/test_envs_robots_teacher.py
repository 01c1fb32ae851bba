"""The pick and place teacher (platform_envs.robots.teacher): its actions' form, its phases from
given states, and the real thing: the teacher alone succeeds on at least 90% of 20 seeded
episodes (seeds 0..19) of each arm, the same episodes every run."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from platform_envs.robots.pick_place import PickPlaceEnv
from platform_envs.robots.teacher import HandActions, PickPlaceTeacher, Suggestion, TeacherView

ARMS = ("franka_emika_panda", "ufactory_xarm7")
SEEDS = range(20)
REQUIRED_SUCCESSES = 18  # 90% of 20
STEP_LIMIT = 300  # decisions: the 60 s time limit at 5 a second

LOW = np.array([0.25, -0.3, 0.22])
HIGH = np.array([0.85, 0.3, 0.82])
BIN = np.array([0.7, 0.15, 0.2])


def _teacher(control: str = "hand_steps") -> PickPlaceTeacher:
    return PickPlaceTeacher(HandActions(control, 0.02, 5), LOW, HIGH)


def _view(**changes: Any) -> TeacherView:
    view: dict[str, Any] = dict(
        hand_target=np.array([0.55, 0.0, 0.52]),
        hand_position=np.array([0.55, 0.0, 0.52]),
        gripper_closed=False,
        gripper_opening=1.0,
        fingers_touching=(False, False),
        block_position=np.array([0.45, -0.1, 0.22]),
        target_bin_center=BIN,
        block_in_target_bin=False,
    )
    view.update(changes)
    return TeacherView(**view)


def test_hand_steps_actions_are_the_nearest_levels_and_the_gripper() -> None:
    actions = HandActions("hand_steps", 0.02, 5)
    assert actions.action(Suggestion(np.array([0.1, -0.1, 0.0]), True, "")) == [4, 0, 2, 1]
    assert actions.action(Suggestion(np.array([0.011, -0.009, 0.004]), False, "")) == [3, 1, 2, 0]
    assert all(isinstance(level, int) for level in actions.action(Suggestion(np.zeros(3), False, "")))


def test_hand_actions_are_the_move_in_hand_steps_clipped() -> None:
    actions = HandActions("hand", 0.02, 5)
    assert actions.action(Suggestion(np.array([0.1, -0.01, 0.0]), True, "")) == [1.0, -0.5, 0.0, 1.0]
    assert all(isinstance(value, float) for value in actions.action(Suggestion(np.zeros(3), False, "")))


def test_joint_control_has_no_teacher_actions() -> None:
    with pytest.raises(ValueError, match="control 'joints' has none"):
        HandActions("joints", 0.02, 5)


def test_it_rises_then_moves_over_the_block_then_descends_then_closes() -> None:
    teacher = _teacher()
    low_hand = np.array([0.55, 0.0, 0.25])
    rising = teacher.suggest(_view(hand_target=low_hand, hand_position=low_hand))
    assert rising.phase == "above block" and rising.move[2] > 0 and not rising.move[:2].any()
    over = teacher.suggest(_view())
    assert over.phase == "above block" and over.move[0] < 0 and over.move[1] < 0 and not over.close
    above = np.array([0.45, -0.1, 0.32])
    descend = teacher.suggest(_view(hand_target=above, hand_position=above))
    assert descend.phase == "descend to block" and descend.move[2] < 0 and not descend.move[:2].any()
    at_block = np.array([0.45, -0.1, 0.22])
    lagging = at_block + [0.0, 0.0, 0.02]
    assert teacher.suggest(_view(hand_target=at_block, hand_position=lagging)).close is False  # settles first
    close = teacher.suggest(_view(hand_target=at_block, hand_position=at_block))
    assert close.phase == "close" and close.close and not close.move.any()


def test_it_waits_for_the_fingers_then_reopens_when_they_shut_on_nothing() -> None:
    teacher = _teacher()
    at_block = np.array([0.45, -0.1, 0.22])
    closing = _view(hand_target=at_block, hand_position=at_block, gripper_closed=True, gripper_opening=0.7)
    assert teacher.suggest(closing).close
    shut = _view(hand_target=at_block, hand_position=at_block, gripper_closed=True, gripper_opening=0.02)
    assert teacher.suggest(shut).phase == "open after a missed grasp" and not teacher.suggest(shut).close
    away = np.array([0.6, 0.1, 0.3])
    assert not teacher.suggest(_view(hand_target=away, hand_position=away, gripper_closed=True)).close


def test_holding_it_lifts_carries_over_the_target_bin_lowers_and_opens() -> None:
    teacher = _teacher()
    held = dict(gripper_closed=True, gripper_opening=0.5, fingers_touching=(True, True))
    hand = np.array([0.45, -0.1, 0.22])
    lift = teacher.suggest(_view(hand_target=hand, hand_position=hand, block_position=hand, **held))
    assert lift.phase == "above target bin" and lift.close and lift.move[2] > 0 and not lift.move[:2].any()
    high = np.array([0.45, -0.1, 0.32])
    carry = teacher.suggest(_view(hand_target=high, hand_position=high, block_position=high, **held))
    assert carry.close and carry.move[0] > 0 and carry.move[1] > 0
    over = np.array([0.7, 0.15, 0.32])
    lower = teacher.suggest(_view(hand_target=over, hand_position=over, block_position=over, **held))
    assert lower.phase == "descend to bin" and lower.move[2] < 0 and lower.close
    near = over + [0.012, -0.012, 0.0]  # within the bin's slack: straight down, no dithering
    straight = teacher.suggest(_view(hand_target=near, hand_position=near, block_position=near, **held))
    assert straight.phase == "descend to bin" and not straight.move[:2].any()
    release = np.array([0.7, 0.15, BIN[2] + teacher.release_height])
    let_go = teacher.suggest(
        _view(hand_target=release, hand_position=release, block_position=release, **held)
    )
    assert let_go.phase == "open" and not let_go.close


def test_with_the_block_in_the_bin_it_retreats_upward_open() -> None:
    teacher = _teacher()
    hand = np.array([0.7, 0.15, 0.25])
    retreat = teacher.suggest(_view(hand_target=hand, hand_position=hand, block_in_target_bin=True))
    assert retreat.phase == "retreat" and retreat.move[2] > 0 and not retreat.close
    top = hand.copy()
    top[2] = BIN[2] + teacher.travel_height
    assert not teacher.suggest(_view(hand_target=top, hand_position=top, block_in_target_bin=True)).move.any()


def test_the_same_state_gets_the_same_suggestion() -> None:
    view = _view()
    assert _teacher().action(view) == _teacher().action(view) == [0, 0, 0, 0]


def _play_teacher(robot: str, seed: int, control: str = "hand_steps") -> tuple[bool, int, list[Any]]:
    env = PickPlaceEnv(robot, control=control)
    _, info = env.reset(seed=seed)
    actions = []
    for step in range(1, STEP_LIMIT + 1):
        actions.append(info["teacher_action"])
        _, _, terminated, truncated, info = env.step(info["teacher_action"])
        if terminated or truncated:
            return bool(info["is_success"]), step, actions
    return False, STEP_LIMIT, actions


@pytest.mark.parametrize("robot", ARMS)
def test_the_teacher_alone_places_the_block_in_at_least_90_percent_of_20_seeded_episodes(robot: str) -> None:
    started = time.perf_counter()
    outcomes = [_play_teacher(robot, seed) for seed in SEEDS]
    successes = [steps for success, steps, _ in outcomes if success]
    seconds = time.perf_counter() - started
    print(
        f"{robot}: teacher succeeded in {len(successes)}/{len(SEEDS)} episodes, "
        f"{np.mean(successes):.1f} steps on average ({seconds:.1f} s)"
    )
    failed = [seed for seed, (success, _, _) in zip(SEEDS, outcomes, strict=True) if not success]
    assert len(successes) >= REQUIRED_SUCCESSES, f"failed seeds: {failed}"


@pytest.mark.parametrize("robot", ARMS)
def test_the_continuous_teacher_places_the_block(robot: str) -> None:
    for seed in (0, 1, 2):
        success, _, actions = _play_teacher(robot, seed, control="hand")
        assert success, f"seed {seed}"
        assert all(len(action) == 4 and all(isinstance(v, float) for v in action) for action in actions)


def test_the_teacher_plays_the_same_episode_every_time() -> None:
    first = _play_teacher("franka_emika_panda", 3)
    again = _play_teacher("franka_emika_panda", 3)
    assert first == again
