"""A thinned life's frames end to end: the env host learns each session's place in the life from
the recorder and its instance draws only the frames the life keeps; the life still holds a frame
for exactly the steps `platform_contracts.frame_thinning` keeps, across two sessions (the second
from the first's last step), each the frame of its step."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import platform_sdk
from platform_contracts.frame_thinning import is_kept
from platform_sdk.recordings import LifeReader
from platform_testing.waiting import wait_for

MAX_FRAMES = 100  # five frames a segment: steps 0-4, 5-13 by 2, 15-31 by 4, 35-67 by 8, 75-139 by 16...


def _cart_x_in(frame: np.ndarray) -> float:
    """Where CartPole's cart is drawn: the mean column of its black pixels in rows of its body
    below the track line (within a pixel of `x * 125 + 300`)."""
    rows = frame[303:312]
    dark = np.argwhere(rows.max(axis=2) < 60)
    return float(dark[:, 1].mean())


def _schedule_line(session_id: str, offset: int) -> str:
    return f"session {session_id}: life step {offset} on (frame_every=0, max_frames={MAX_FRAMES})"


def _run(platform_stack, steps: int, seed: int, offset: int) -> str:
    """A recorded session of the life, stepping with alternating actions once the env host has
    learnt the session's place (it asks the recorder from the reset on; a session that ended
    first would never hear it)."""
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, auto_reset=True, life="drawn-1",
                              max_frames=MAX_FRAMES) as env:
        env.reset(seed=seed)
        line = _schedule_line(env.session_id, offset)
        wait_for(lambda: line in platform_stack.log("envhost"), timeout=30,
                 what=f"the env host to learn {env.session_id}'s place in its life")
        for i in range(steps):
            env.step(i % 2)
        return env.session_id


def test_a_thinned_life_keeps_a_frame_for_exactly_the_kept_steps(platform_stack):
    root = Path(platform_stack.recordings)
    first = _run(platform_stack, 150, seed=0, offset=0)
    second = _run(platform_stack, 100, seed=1, offset=150)

    def life_done():
        path = root / "lives" / "drawn-1.json"
        index = json.loads(path.read_text()) if path.exists() else {}
        sessions = index.get("sessions", [])
        done = len(sessions) == 2 and all(s.get("status") == "closed" for s in sessions)
        return index if done and index.get("total_steps") == 250 else None

    index = wait_for(life_done, timeout=60, what="the life drawn-1 to hold both sessions")
    assert [s["session_id"] for s in index["sessions"]] == [first, second]

    life = LifeReader(root, "drawn-1")
    frames = list(life.frames())
    assert [step for step, _ in frames] == [t for t in range(251) if is_kept(t, 0, MAX_FRAMES)]
    assert {frame.shape for _, frame in frames} == {(400, 600, 3)}
    # Each frame is its step's: the cart is drawn where that step's observation puts it.
    positions = {}
    for episode in life.episodes():
        for step, observation in zip(episode.row_steps().tolist(), episode["observations"], strict=True):
            positions.setdefault(step, float(observation[0]))  # an ending step's row before the next reset's
    for step, frame in frames:
        expected = positions[step] * 600 / 4.8 + 300  # CartPole's scale: 600 pixels for 4.8 m
        assert abs(_cart_x_in(frame) - expected) < 1.5, f"the frame of life step {step} shows that step"
