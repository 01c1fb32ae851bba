"""Upper bounds shared by the built-in catalogs' numeric options (their `maximum`).

A decision's cost grows with the work it does in one step (physics steps, emulated frames,
engine tics): those bounds keep one decision under a few seconds on a small CPU, so a session
never burns a core on one step nobody will see. The others (episode lengths, weights, seeds)
cost nothing per step; they are bounded so that every numeric option has a range the web app
can show and the broker can check (a test asserts every built-in numeric option has one).
"""

from __future__ import annotations

MAX_PHYSICS_STEPS_PER_DECISION = 1000  # MuJoCo substeps / frame_skip: ~1 s for the heaviest models
MAX_FRAMES_PER_DECISION = 60  # Atari frameskip: one emulated second (60 frames)
MAX_TICS_PER_DECISION = 105  # Doom tics: three game seconds (35 tics a second)
MAX_EPISODE_STEPS = 10_000_000  # max_episode_steps: a limit, not a cost
MAX_EPISODE_SECONDS = 86_400.0  # time_limit in simulated seconds: one day
MAX_WEIGHT = 1_000_000.0  # reward and cost weights, noise scales
MAX_SEED = 2**32 - 1  # seeds (numpy's range)
