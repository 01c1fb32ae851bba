"""Which frames of a life are kept: a pure function of the life step (`--frame-every`, `--max-frames`).

A life step t counts actions across the whole life: the observation after the life's t-th action
is at step t (a reset's observation at the step of the action before it). With spacing
s0 = max(1, frame_every):

- max_frames M = 0: a frame is kept at t iff t % s0 == 0.
- M > 0: segments k = 0, 1, ... of n = ceil(M / 20) kept frames each (at least 1), with spacing
  s0 * 2**k; segment k starts at S_k = n * s0 * (2**k - 1) (the sum of the earlier segments'
  lengths). A frame is kept at t iff t is in segment k, (t - S_k) % (s0 * 2**k) == 0, and fewer
  than M frames come before it. The spacing doubles each time a twentieth of M is used, so M
  frames last about 52,000 x M steps (the M-th is kept at about (2**19 - 1 + 2**19) * M / 20 * s0).

Nothing here depends on a session: any reader can recompute the schedule. The environment
server draws only the frames kept (`platform_sdk.server.frame_schedule`, told the life's place by
the env host) and the recorder keeps them (`platform_recorder.writing.life_columns`): both use
this rule.
"""

from __future__ import annotations

SEGMENTS = 20


def thinning(frame_every: int, max_frames: int) -> bool:
    """The settings keep fewer frames than observation rows (files then carry `frame_steps`)."""
    return frame_every > 1 or max_frames > 0


def segment_frames(max_frames: int) -> int:
    """n: the frames kept per segment of spacing s0 * 2**k (ceil(M / 20), at least 1)."""
    return max(1, -(-max_frames // SEGMENTS))


def frame_number(t: int, frame_every: int = 0, max_frames: int = 0) -> int | None:
    """The number (0, 1, ...) of the kept frame at life step `t`, or None when `t` keeps none."""
    if t < 0:
        return None
    spacing = max(1, frame_every)
    if max_frames <= 0:
        return t // spacing if t % spacing == 0 else None
    n = segment_frames(max_frames)
    k = (t // (n * spacing) + 1).bit_length() - 1  # the largest k with S_k <= t
    start = n * spacing * ((1 << k) - 1)
    step = spacing << k
    offset = t - start
    if offset % step:
        return None
    number = k * n + offset // step
    return number if number < max_frames else None


def is_kept(t: int, frame_every: int = 0, max_frames: int = 0) -> bool:
    """A frame at life step `t` is kept."""
    return frame_number(t, frame_every, max_frames) is not None


def kept_step(number: int, frame_every: int = 0, max_frames: int = 0) -> int | None:
    """The life step of kept frame `number` (0-based; the inverse of `frame_number`), or None past
    the last one (`max_frames`)."""
    if number < 0 or (max_frames > 0 and number >= max_frames):
        return None
    spacing = max(1, frame_every)
    if max_frames <= 0:
        return number * spacing
    n = segment_frames(max_frames)
    k, j = divmod(number, n)
    return n * spacing * ((1 << k) - 1) + j * (spacing << k)
