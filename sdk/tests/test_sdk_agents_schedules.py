"""The schedules and the running observation normalizer offered to agents."""

from __future__ import annotations

import numpy as np
import pytest
from platform_sdk.agents import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PiecewiseSchedule,
    RunningNormalizer,
)
from platform_sdk.agents.schedules import schedule_from_text


def test_schedules_give_their_values():
    assert ConstantSchedule(0.1).value(1e9) == 0.1
    linear = LinearSchedule(1.0, 0.1, 100)
    assert [linear.value(t) for t in (-5, 0, 50, 100, 500)] == pytest.approx([1.0, 1.0, 0.55, 0.1, 0.1])
    piecewise = PiecewiseSchedule([(0, 1.0), (10, 0.5), (30, 0.1)])
    assert [piecewise.value(t) for t in (-1, 0, 5, 10, 20, 30, 99)] == pytest.approx(
        [1.0, 1.0, 0.75, 0.5, 0.3, 0.1, 0.1])
    assert PiecewiseSchedule([(0, 1.0), (10, 0.5)], outside=0.0).value(11) == 0.0
    exponential = ExponentialSchedule(1.0, 0.01, 0.995)  # ai_traineree's epsilon per episode
    assert exponential.value(1) == pytest.approx(0.995)
    assert exponential.value(10_000) == 0.01


def test_schedules_from_text_and_their_errors():
    assert schedule_from_text("0.2").value(5) == 0.2
    assert schedule_from_text("linear:1,0,10").value(5) == pytest.approx(0.5)
    assert schedule_from_text("exp:1.0,0.05,0.5").value(2) == pytest.approx(0.25)
    assert schedule_from_text("piecewise:0=1,10=0").value(5) == pytest.approx(0.5)
    for bad in ("linear:1,2", "wobble:1", "piecewise:0=1,0=2", "exp:1,0,2", "nan", "linear:1,0,0"):
        with pytest.raises(ValueError, match="schedule"):
            schedule_from_text(bad)


def test_the_normalizer_keeps_the_running_mean_and_variance_of_every_row():
    rng = np.random.default_rng(0)
    data = rng.normal([3.0, -2.0], [2.0, 0.5], size=(1000, 2))
    normalizer = RunningNormalizer(2, clip=None)
    normalizer.update(data[0])
    for start in range(1, 1000, 37):
        normalizer.update(data[start:start + 37])
    assert normalizer.count == 1000
    assert normalizer.mean == pytest.approx(data.mean(axis=0))
    assert normalizer.var == pytest.approx(data.var(axis=0))
    normalized = normalizer(data, update=False)
    assert normalized.dtype == np.float32
    assert normalized.mean(axis=0) == pytest.approx([0, 0], abs=1e-5)
    assert normalized.std(axis=0) == pytest.approx([1, 1], abs=1e-4)


def test_the_normalizer_clips_and_survives_a_checkpoint():
    normalizer = RunningNormalizer((2,), clip=1.0)
    normalizer.update([[0.0, 0.0], [2.0, 2.0]])
    assert normalizer(np.array([100.0, -100.0]), update=False).tolist() == [1.0, -1.0]
    again = RunningNormalizer.from_state(normalizer.state())
    assert again.count == 2 and again.mean.tolist() == [1.0, 1.0] and again.clip == 1.0
