"""Doom (ViZDoom) in process: steps per second of each scenario at the default tics against
CartPole measured in the same run (the ratio is what to compare across machines), render +
JPEG frames per second, and snapshot restore time against the episode's length.

    uv run python bench/doom_rate.py                 # 3 s per measurement
    uv run python bench/doom_rate.py --seconds 1 --lengths 100 1000

Restoring a Doom snapshot replays the episode from its seed (platform_envs.doom.env), so its
time grows with the steps taken; `labels=True` replays drawing every frame and is slower.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import simplejpeg
from platform_envs.doom import make_env

SCENARIOS = ("basic", "defend_the_center", "health_gathering", "deathmatch", "freedoom-e1m1")


def rate(step_once: Callable[[], None], seconds: float) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step_once()
        count += 1
    return count / (time.perf_counter() - start)


def stepper(env: Any) -> Callable[[], None]:
    env.reset(seed=0)
    space = env.action_space
    space.seed(0)

    def step_once() -> None:
        _, _, terminated, truncated, _ = env.step(space.sample())
        if terminated or truncated:
            env.reset()

    return step_once


def restore_seconds(scenario: str, length: int, labels: bool, repeats: int) -> tuple[int, float]:
    """The steps taken (`length` unless the player died first) and the median time to unpickle
    an environment that many steps into an endless episode."""
    env = make_env(scenario, labels=labels, max_episode_steps=float("inf"))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    names = env.metadata["action_names"]
    safe = [i for i, name in enumerate(names) if "ATTACK" not in name] or list(range(len(names)))
    steps = 0
    while steps < length:  # no shooting: basic would end at the monster's death
        _, _, terminated, _, _ = env.step(int(rng.choice(safe)))
        steps += 1
        if terminated:  # died: the restore below times a shorter episode
            break
    data = pickle.dumps(env)
    env.close()
    times = []
    for _ in range(repeats):
        restored = pickle.loads(data)
        times.append(restored.last_restore_seconds)
        restored.close()
    return steps, statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    cartpole = gymnasium.make("CartPole-v1")
    base = rate(stepper(cartpole), args.seconds)
    cartpole.close()
    print(f"{'CartPole-v1':<18} {base:>9,.0f} steps/s (the baseline)", flush=True)
    for scenario in SCENARIOS:
        env = make_env(scenario)
        steps = rate(stepper(env), args.seconds)
        env.reset(seed=0)
        frame = env.render()
        assert frame is not None
        frames = rate(lambda: simplejpeg.encode_jpeg(np.ascontiguousarray(env.render()), quality=90), args.seconds)
        env.close()
        print(
            f"{scenario:<18} {steps:>9,.0f} steps/s ({steps / base:.4f} of CartPole, "
            f"{steps * env.tics / 35:,.0f}x real time) | render+JPEG {frame.shape[0]}x{frame.shape[1]} "
            f"{frames:>6,.0f} frames/s",
            flush=True,
        )
    print("restore (unpickle = replay), median of", args.repeats)
    for scenario in ("basic", "freedoom-e1m1"):
        for labels in (False, True):
            cells = []
            for length in args.lengths:
                steps, seconds = restore_seconds(scenario, length, labels, args.repeats)
                cells.append(f"{steps:>5} steps {seconds * 1000:>7.1f} ms ({seconds / steps * 1e3:.3f} ms/step)")
            print(f"{scenario:<18} labels={labels!s:<5} " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
