"""The columns a life adds to an episode file: `life_start`, and with thinning `frame_steps`.

Life steps come from the env host's numbering of a session's events: seq counts every event from
1 and each episode (from 0) begins with a reset or restore event, so the event with seq s in
episode e comes after s - e - 1 steps of its session. Row r of an episode's observations (and
frames) is at life step `offset + s - e - 1` of its event: a reset's row at the step of the action
before it, a step's row at that step. An episode's `life_start` is the life step before its first
step: its reset row's step, or (a file that begins with a step, e.g. an endless run's next file)
one less than its first step's.

Thinning (platform_contracts.frame_thinning) keeps a row's frame iff its life step is kept. A reset
or restore row shares its life step with the row before it (the previous episode's last step),
so only the life's very first row (seq 1 of its first session) keeps a start row's frame: at most
one frame per life step, so never more than `max_frames`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from platform_contracts.frame_thinning import is_kept
from platform_recorder.writing.lives import LifePlace
from platform_recorder.writing.observation_frames import has_frame
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2

LIFE_START = "life_start"
FRAME_STEPS = "frame_steps"


def session_steps_at(event: events_pb2.StepEvent) -> int:
    """The session's steps up to and including `event` (s - e - 1)."""
    return int(event.seq) - int(event.episode) - 1


def episode_life_start(offset: int, events: Sequence[events_pb2.StepEvent]) -> int:
    """`life_start` of an episode file whose events (sorted by seq) are `events`."""
    first = events[0]
    steps = session_steps_at(first)
    return offset + (steps - 1 if first.WhichOneof("kind") == "step" else steps)


def thin_frames(
    rows: Sequence[events_pb2.StepEvent],
    frames: Sequence[environment_pb2.Frame | None],
    place: LifePlace,
) -> tuple[list[int], np.ndarray]:
    """The rows whose frames are kept, of an episode's rows (`rows[i]` the event of frame row
    i), and their life steps (`frame_steps`, int64)."""
    kept: list[int] = []
    steps: list[int] = []
    for row, (event, frame) in enumerate(zip(rows, frames)):
        if not has_frame(frame):
            continue
        if event.WhichOneof("kind") != "step" and not (place.position == 0 and event.seq == 1):
            continue
        t = place.offset + session_steps_at(event)
        if is_kept(t, place.frame_every, place.max_frames):
            kept.append(row)
            steps.append(t)
    return kept, np.array(steps, dtype=np.int64)


def recorded_steps(
    entries: Iterable[dict[str, Any]],
    open_events: Iterable[Sequence[events_pb2.StepEvent]],
    life: LifePlace | None,
) -> int:
    """The steps a session of a life recorded: the most its finished episodes (meta entries with
    `life_start` and `length`) and its open episodes' events reach."""
    offset = life.offset if life is not None else 0
    best = 0
    for entry in entries:
        if LIFE_START in entry and "length" in entry:
            best = max(best, int(entry[LIFE_START]) - offset + int(entry["length"]))
    for events in open_events:
        best = max([best, *(session_steps_at(e) for e in events)])
    return best
