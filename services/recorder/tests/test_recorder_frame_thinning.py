"""platform_contracts.frame_thinning: the schedule of kept frames, a pure function of the life step."""

from __future__ import annotations

import numpy as np
import pytest
from platform_contracts.frame_thinning import (
    frame_number,
    is_kept,
    kept_step,
    segment_frames,
    thinning,
)


def kept_in(last: int, frame_every: int, max_frames: int) -> list[int]:
    return [t for t in range(last + 1) if is_kept(t, frame_every, max_frames)]


def test_twenty_thousand_frames_last_about_fifty_thousand_steps_each() -> None:
    m = 20_000
    last = kept_step(m - 1, max_frames=m)
    assert last is not None and 45_000 * m <= last <= 60_000 * m
    assert is_kept(last, max_frames=m) and frame_number(last, max_frames=m) == m - 1
    assert kept_step(m, max_frames=m) is None
    # nothing after the M-th frame: the next slots of its segment and of the segments after it
    spacing = 1 << 19
    for t in (last + spacing, last + 2 * spacing, 4 * last, last + 1):
        assert not is_kept(t, max_frames=m)
    # the first segment keeps every step, then the spacing doubles every M/20 frames
    n = segment_frames(m)
    assert n == 1000 and kept_in(n + 6, 0, m) == [*range(n), n, n + 2, n + 4, n + 6]
    assert [kept_step(k * n, max_frames=m) for k in range(4)] == [0, 1000, 3000, 7000]


def test_the_schedule_keeps_exactly_max_frames_in_order() -> None:
    m = 40  # 20 segments of 2 frames: small enough to check every step
    last = kept_step(m - 1, max_frames=m)
    assert last == 2 * (2**19 - 1) + 2**19
    steps = np.flatnonzero([is_kept(t, 0, m) for t in range(last + 2**20)])
    assert len(steps) == m and steps[-1] == last
    assert [frame_number(int(t), 0, m) for t in steps] == list(range(m))
    assert [kept_step(i, 0, m) for i in range(m)] == steps.tolist()
    gaps = np.diff(steps)
    assert gaps.tolist() == [2**k for k in range(20) for _ in range(2)][: m - 1]  # 1, 1, 2, 2, 4, 4, ...


def test_frame_every_alone_keeps_one_in_n() -> None:
    assert kept_in(20, 5, 0) == [0, 5, 10, 15, 20]
    assert kept_step(7, frame_every=5) == 35 and frame_number(35, 5, 0) == 7
    assert kept_in(4, 0, 0) == kept_in(4, 1, 0) == [0, 1, 2, 3, 4]
    assert not thinning(0, 0) and not thinning(1, 0) and thinning(2, 0) and thinning(0, 10)


@pytest.mark.parametrize("m", [7, 25, 20_000])
def test_frame_every_and_max_frames_together(m: int) -> None:
    every = 3
    n = segment_frames(m)
    assert n == max(1, -(-m // 20))
    # a first segment of n frames `every` apart, then n frames 2 * every apart, ...
    assert [kept_step(i, every, m) for i in range(n)] == [every * i for i in range(n)]
    second = [kept_step(n + j, every, m) for j in range(min(n, m - n))]
    assert second == [every * n + 2 * every * j for j in range(len(second))]
    last = kept_step(m - 1, every, m)
    assert last is not None and is_kept(last, every, m) and frame_number(last, every, m) == m - 1
    assert all(not is_kept(last + d, every, m) for d in range(1, 5 * every << 20, 997))
    assert kept_in(every * n * 3 - 1, every, m) == [kept_step(i, every, m) for i in range(min(m, 2 * n))]


def test_negative_steps_keep_nothing() -> None:
    assert not is_kept(-1, 0, 0) and frame_number(-3, 2, 10) is None and kept_step(-1) is None
