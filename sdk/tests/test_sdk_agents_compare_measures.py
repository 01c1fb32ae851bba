"""The comparison's measures (platform_sdk.agents.compare_measures) on synthetic reward traces.

Every trace is built from flat stretches of exactly representable rewards, so each expected
number is exact.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from platform_contracts.world_changes import WorldChangeError, parse_timeline, world_state
from platform_sdk.agents.compare_measures import AgentTrace, measure


def flat(*stretches: tuple[int, float]) -> list[float]:
    """Rewards made of (steps, reward) stretches."""
    return [reward for steps, reward in stretches for _ in range(steps)]


def mass(at: int, scale: float, body: str = "hand") -> dict[str, Any]:
    return {"at": at, "change": "mass", "body": body, "scale": scale}


def run(rewards: list[float], changes: list[dict[str, Any]], window: int = 10, first_step: int = 0,
        **trace: Any) -> dict[str, Any]:
    result = measure(AgentTrace(first_step=first_step, rewards=rewards, **trace), window, changes)
    json.dumps(result, allow_nan=False)  # JSON-able, no NaN or infinity
    return result


# --- recovery -----------------------------------------------------------------------------


def test_recovery_zero_when_the_first_window_is_already_back() -> None:
    result = run(flat((50, 1.0), (10, 0.9375), (40, 1.0)), [mass(50, 2.0)])
    assert result["recovery"] == [{
        "at": 50, "changes": [mass(50, 2.0)], "before": 1.0, "steps": 0, "worst": 0.9375,
        "recovered": True, "too_close": False,
    }]


def test_recovery_after_k_windows_counts_session_steps() -> None:
    # first_step 100: the change at session step 150 is the agent's 50th step.
    rewards = flat((50, 2.0), (10, -1.0), (10, 0.5), (10, 1.875), (20, 2.0))
    [row] = run(rewards, [mass(150, 2.0)], first_step=100)["recovery"]
    assert (row["before"], row["steps"], row["worst"], row["recovered"]) == (2.0, 20, -1.0, True)


def test_recovery_level_for_a_negative_reward_is_below_it() -> None:
    # before -1.0: back at >= -1.1; -1.25 is not, -1.0625 is.
    rewards = flat((30, -1.0), (10, -2.0), (10, -1.25), (10, -1.0625), (10, -5.0))
    [row] = run(rewards, [mass(30, 2.0)])["recovery"]
    assert (row["before"], row["steps"], row["worst"], row["recovered"]) == (-1.0, 20, -2.0, True)


def test_worst_stops_at_the_recovering_window() -> None:
    rewards = flat((20, 1.0), (10, 0.5), (10, 1.0), (10, -3.0))
    [row] = run(rewards, [mass(20, 2.0)])["recovery"]
    assert (row["steps"], row["worst"]) == (10, 0.5)


def test_never_recovered_reports_the_worst_of_every_window_before_the_next_change() -> None:
    # Change at 50, next at 75: its windows are [50, 60) and [60, 70); [70, 75) is not full.
    rewards = flat((50, 1.0), (10, 0.5), (10, 0.25), (5, -7.0), (10, 1.0), (25, 1.0))
    first, second = run(rewards, [mass(50, 2.0), mass(75, 1.0)])["recovery"]
    assert first == {"at": 50, "changes": [mass(50, 2.0)], "before": 1.0, "steps": None, "worst": 0.25,
                     "recovered": False, "too_close": False}
    assert second["at"] == 75 and second["recovered"] is True and second["steps"] == 0


def test_never_recovered_until_the_end_of_the_run() -> None:
    [row] = run(flat((40, 4.0), (20, 3.0), (10, 2.0), (5, 0.0)), [mass(40, 2.0)])["recovery"]
    assert (row["before"], row["steps"], row["worst"], row["recovered"]) == (4.0, None, 2.0, False)


def test_too_close_before_after_the_first_step_and_after_the_previous_change() -> None:
    rewards = flat((100, 1.0))
    early, later = run(rewards, [mass(5, 2.0), mass(60, 1.0)])["recovery"]
    assert early == {"at": 5, "changes": [mass(5, 2.0)], "before": None, "steps": None, "worst": None,
                     "recovered": False, "too_close": True}
    assert later["too_close"] is False  # 60 - 10 >= 5 and 60 + 10 <= 100
    rows = run(rewards, [mass(50, 2.0), mass(55, 1.0)])["recovery"]
    assert [row["too_close"] for row in rows] == [True, True]  # 50: W_0 does not fit before 55; 55: no window after 50
    assert rows[1]["before"] is None


def test_too_close_after_at_the_end_of_the_run() -> None:
    [row] = run(flat((95, 1.0)), [mass(90, 2.0)])["recovery"]
    assert row["too_close"] is True and row["before"] is None and row["worst"] is None
    [row] = run(flat((100, 1.0)), [mass(90, 2.0)])["recovery"]
    assert row["too_close"] is False and row["steps"] == 0  # W_0 = [90, 100) ends at the end


def test_only_changes_inside_the_run_are_measured_and_groups_share_an_at() -> None:
    other = {"at": 50, "change": "friction", "scale": 0.5}
    changes = [mass(0, 3.0), mass(20, 2.0), other, mass(50, 1.5), mass(100, 1.0), mass(150, 1.0)]
    rows = run(flat((80, 1.0)), changes, first_step=20)["recovery"]
    assert [row["at"] for row in rows] == [50]  # 0 and 20: the starting world; 100 and 150: after the end
    assert rows[0]["changes"] == [other, mass(50, 1.5)]  # in list order


def test_changes_given_out_of_order_are_measured_in_step_order() -> None:
    rows = run(flat((100, 1.0)), [mass(70, 1.0), mass(30, 2.0)])["recovery"]
    assert [row["at"] for row in rows] == [30, 70]


# --- retention ----------------------------------------------------------------------------


def test_retention_when_the_second_change_returns_the_world() -> None:
    # Starting world [0, 50); scale 2 [50, 100); scale 1 again from 100.
    rewards = flat((40, 0.0), (10, 2.0), (50, -4.0), (10, 1.5), (40, 2.0))
    result = run(rewards, [mass(50, 2.0), mass(100, 1.0)])
    assert result["retention"] == [{"at": 100, "returns_to": 0, "before": 2.0, "after": 1.5, "retention": 0.75,
                                    "too_close": False}]


def test_retention_of_a_negative_level() -> None:
    rewards = flat((40, 0.0), (10, -2.0), (50, -9.0), (10, -3.0), (10, -1.0))
    [row] = run(rewards, [mass(50, 2.0), mass(100, 1.0)])["retention"]
    assert (row["before"], row["after"], row["retention"]) == (-2.0, -3.0, 0.5)
    rewards = flat((40, 0.0), (10, -2.0), (50, -9.0), (10, -1.0), (10, -1.0))
    [row] = run(rewards, [mass(50, 2.0), mass(100, 1.0)])["retention"]
    assert row["retention"] == 1.5  # better than before the change


def test_retention_is_none_when_before_is_zero() -> None:
    rewards = flat((50, 0.0), (50, 1.0), (20, 0.5))
    [row] = run(rewards, [mass(50, 2.0), mass(100, 1.0)])["retention"]
    assert (row["before"], row["after"], row["retention"], row["too_close"]) == (0.0, 0.5, None, False)


def test_retention_returns_to_a_world_set_before_the_first_step() -> None:
    changes = [mass(0, 2.0), mass(250, 3.0), mass(300, 2.0)]
    rewards = flat((40, 0.0), (10, 4.0), (50, 0.0), (10, 3.0), (10, 0.0))
    [row] = run(rewards, changes, first_step=200)["retention"]
    assert (row["at"], row["returns_to"], row["before"], row["after"], row["retention"]) == (300, 200, 4.0, 3.0, 0.75)


def test_retention_uses_the_latest_earlier_time_in_that_world() -> None:
    # A [0, 30), B [30, 60), A [60, 90), B [90, 120), A from 120.
    changes = [mass(30, 2.0), mass(60, 1.0), mass(90, 2.0), mass(120, 1.0)]
    rewards = flat((20, 0.0), (10, 1.0), (20, 0.0), (10, 2.0), (20, 0.0), (10, 4.0), (20, 0.0), (10, 8.0), (10, 1.0))
    rows = run(rewards, changes)["retention"]
    assert [(row["at"], row["returns_to"], row["before"], row["after"]) for row in rows] == [
        (60, 0, 1.0, 0.0), (90, 30, 2.0, 0.0), (120, 60, 4.0, 1.0),
    ]
    assert rows[2]["retention"] == 0.25


def test_retention_too_close_when_a_window_does_not_fit_its_time() -> None:
    # The earlier time [0, 5) is shorter than the window.
    [row] = run(flat((100, 1.0)), [mass(5, 2.0), mass(50, 1.0)])["retention"]
    assert row == {"at": 50, "returns_to": 0, "before": None, "after": None, "retention": None, "too_close": True}
    # After returning at 95 the run has only 5 steps.
    [row] = run(flat((100, 1.0)), [mass(50, 2.0), mass(95, 1.0)])["retention"]
    assert row["too_close"] is True and row["retention"] is None


def test_no_retention_without_a_return_or_for_a_change_that_changes_nothing() -> None:
    assert run(flat((100, 1.0)), [mass(30, 2.0), mass(60, 3.0)])["retention"] == []
    assert run(flat((100, 1.0)), [mass(30, 1.0)])["retention"] == []  # scale 1: the world as built already
    rows = run(flat((100, 1.0)), [mass(30, 2.0), mass(60, 2.0), mass(80, 1.0)])["retention"]
    assert [(row["at"], row["returns_to"]) for row in rows] == [(80, 0)]


def test_other_targets_make_a_different_world() -> None:
    changes = [mass(30, 2.0), mass(60, 1.0, body="arm"), mass(90, 1.0)]
    rows = run(flat((120, 1.0)), changes)["retention"]
    assert [(row["at"], row["returns_to"]) for row in rows] == [(90, 0)]  # arm at 1.0 is the arm as built


# --- the world a timeline leaves ----------------------------------------------------------


def state(*entries: dict[str, Any]) -> frozenset[tuple[str, str, Any]]:
    return world_state(parse_timeline([{"at": 0, **entry} for entry in entries]))


def test_world_state_neutral_settings_are_the_world_as_built() -> None:
    assert state() == frozenset()
    assert state({"change": "mass", "body": "b", "scale": 1}) == frozenset()
    assert state({"change": "position", "body": "b", "offset": [0, 0, 0]}) == frozenset()
    assert state({"change": "sensor_offset", "offset": 0}) == frozenset()
    assert state({"change": "sensor_noise", "std": 0, "seed": 7}) == frozenset()
    assert state({"change": "motor_strength", "scale": 0.5}) == frozenset({("motor_strength", "*", 0.5)})


def test_world_state_a_later_setting_replaces_the_earlier_one() -> None:
    assert state({"change": "position", "body": "b", "offset": [0.1, 0, 0]},
                 {"change": "position", "body": "b", "offset": [0, 0, 0]}) == frozenset()
    assert state({"change": "friction", "geom": "g", "scale": 2}, {"change": "friction", "body": "g", "scale": 2}) == \
        frozenset({("friction", "geom:g", 2.0), ("friction", "body:g", 2.0)})  # a geom and a body are apart
    noise = state({"change": "sensor_noise", "indices": [1, 2], "std": 0.5, "seed": 3},
                  {"change": "sensor_noise", "indices": [2], "std": 0.0})
    assert noise == frozenset({("sensor_noise", "index:1", (0.5, 3))})


def test_world_state_every_target_replaces_the_named_ones() -> None:
    named = {"change": "motor_strength", "actuator": "a", "scale": 0.5}
    assert state(named, {"change": "motor_strength", "scale": 1.0}) == frozenset()
    assert state({"change": "motor_strength", "scale": 0.5}, named) == frozenset({("motor_strength", "*", 0.5)})
    offsets = state({"change": "sensor_offset", "offset": 0.25}, {"change": "sensor_offset", "indices": [0, 1],
                                                                   "offset": [0.25, 0.0]})
    assert offsets == frozenset({("sensor_offset", "*", 0.25), ("sensor_offset", "index:1", 0.0)})
    assert state({"change": "sensor_offset", "offset": [0.0, 0.5]}) == frozenset({("sensor_offset", "index:1", 0.5)})
    assert state({"change": "sensor_offset", "indices": [1], "offset": 0.5}) == \
        state({"change": "sensor_offset", "offset": [0.0, 0.5]})


# --- success, compute, reward windows -----------------------------------------------------


def test_success_over_finished_episodes_counts_unreported_as_failed() -> None:
    result = run(flat((10, 0.0)), [], episode_success=[True, None, False, True], step_success=[True] * 10)
    assert (result["success"], result["success_of"]) == (0.5, "episodes")


def test_success_over_steps_when_no_episode_finished() -> None:
    result = run(flat((5, 0.0)), [], step_success=[None, True, False, True, True])
    assert (result["success"], result["success_of"]) == (0.75, "steps")


def test_no_success_when_nothing_reports_it() -> None:
    result = run(flat((5, 0.0)), [], step_success=[None] * 5, episode_success=[None, None])
    assert (result["success"], result["success_of"]) == (None, None)
    assert run(flat((5, 0.0)), [])["success"] is None


def test_compute_is_the_mean_time_per_decision() -> None:
    assert run(flat((3, 0.0)), [], compute_s=[0.25, 0.5, 0.75])["compute_s"] == 0.5
    assert run(flat((3, 0.0)), [])["compute_s"] is None


def test_work_measures_are_their_means_and_absent_when_not_reported() -> None:
    result = run(flat((3, 0.0)), [], work={"settle_steps": [2.0, 4.0], "wait_steps": [1.0]})
    assert (result["settle_steps"], result["wait_steps"]) == (3.0, 1.0)
    assert "settle_steps" not in run(flat((3, 0.0)), [], work={"settle_steps": []})
    assert "wait_steps" not in run(flat((3, 0.0)), [])


def test_reward_windows_are_the_full_windows_from_the_first_step() -> None:
    rewards = flat((50, 1.0), (50, -0.5), (25, 3.0))
    assert run(rewards, [], window=50, first_step=200)["reward_windows"] == [
        {"step": 200, "mean": 1.0}, {"step": 250, "mean": -0.5},
    ]
    assert run(flat((9, 1.0)), [])["reward_windows"] == []


def test_an_empty_run_measures_nothing() -> None:
    result = run([], [mass(5, 2.0)], first_step=3)
    assert result == {"success": None, "success_of": None, "compute_s": None, "recovery": [], "retention": [],
                      "reward_windows": []}


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("window", [0, -5, 2.5, True])
def test_a_window_below_one_step_is_refused(window: Any) -> None:
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        measure(AgentTrace(first_step=0, rewards=[1.0]), window, [])


def test_a_reward_that_is_not_finite_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rewards\[2\] is nan"):
        measure(AgentTrace(first_step=0, rewards=[1.0, 2.0, float("nan")]), 1, [])


def test_a_bad_timeline_entry_is_refused() -> None:
    with pytest.raises(WorldChangeError, match=r"world_changes\[0\]\.scale"):
        measure(AgentTrace(first_step=0, rewards=[1.0]), 1, [{"at": 1, "change": "mass", "body": "b", "scale": -1}])
