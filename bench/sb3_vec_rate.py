"""Steps/s of Stable-Baselines3's VecEnv on the platform: one batched session's SB3 face
(`platform_sdk.make_vec(..., auto_reset=True).sb3()`, one round trip per step) against the
baseline users have today, SB3's `DummyVecEnv` of N one-session `platform_sdk.connect` CartPoles
(N round trips per step, plus a reset's after each episode), measured in the same run; and, for
what the face itself costs, the same batched session stepped through Gymnasium's vector API.

Rounds alternate baseline and face; each figure is the median over the rounds with its spread
(min-max), and the ratio is face / baseline of the medians. Round trips per step are counted at
the SDK's stream (`SessionStream.send`). Needs the root project's `sb3` group
(`uv sync --all-packages --group sb3`).

    uv run python bench/sb3_vec_rate.py                       # starts its own platform
    uv run python bench/sb3_vec_rate.py --url http://127.0.0.1:8000 --num-envs 8,32 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_platform import add_platform_arguments, platform_url


class SendCounter:
    """Counts the requests every session stream sends (each is one round trip)."""

    def __init__(self) -> None:
        from platform_sdk.client.stream import SessionStream

        self.count = 0
        original = SessionStream.send

        def send(stream: Any, request: Any) -> int:
            self.count += 1
            return original(stream, request)

        SessionStream.send = send  # type: ignore[method-assign]


def measure(venv: Any, num_envs: int, seconds: float, counter: SendCounter) -> tuple[float, float]:
    """(steps/s, round trips per vector step) of `venv` (SB3's VecEnv, or Gymnasium's vector API
    for the reference row) stepping random CartPole actions."""
    if hasattr(venv, "step_async"):
        venv.seed(0)
        venv.reset()
    else:
        venv.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, (1000, num_envs))
    batches, sent, start = 0, counter.count, time.perf_counter()
    while time.perf_counter() - start < seconds:
        venv.step(actions[batches % 1000])
        batches += 1
    elapsed = time.perf_counter() - start
    return batches * num_envs / elapsed, (counter.count - sent) / batches


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} steps/s ({min(values):,.0f}-{max(values):,.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per figure")
    parser.add_argument("--num-envs", default="8,32", help="vector sizes")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of baseline and face")
    args = parser.parse_args()

    import platform_sdk

    try:
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ModuleNotFoundError:
        print("sb3_vec_rate: Stable-Baselines3 is not installed: uv sync --all-packages --group sb3", file=sys.stderr)
        return 2

    counter = SendCounter()
    with platform_url(args.url, "sb3-vec-rate") as url:
        for n in [int(n) for n in args.num_envs.split(",")]:
            makers: dict[str, Callable[[], Any]] = {
                "DummyVecEnv of connect": lambda n=n: DummyVecEnv(
                    [lambda: platform_sdk.connect("cartpole", url=url) for _ in range(n)]),
                "make_vec(...).sb3()": lambda n=n: platform_sdk.make_vec("cartpole", n, url=url, auto_reset=True).sb3(),
                # the reference: the same batched session through Gymnasium's API, without the face
                "make_vec, Gymnasium API": lambda n=n: platform_sdk.make_vec("cartpole", n, url=url, auto_reset=True),
            }
            rates: dict[str, list[float]] = {name: [] for name in makers}
            trips: dict[str, list[float]] = {name: [] for name in makers}
            for _ in range(args.rounds):
                for name, make in makers.items():
                    venv = make()
                    try:
                        rate, per_step = measure(venv, n, args.seconds, counter)
                    finally:
                        venv.close()
                    rates[name].append(rate)
                    trips[name].append(per_step)
            base = statistics.median(rates["DummyVecEnv of connect"])
            for name in makers:
                ratio = statistics.median(rates[name]) / base
                print(f"{n:>3} envs {name:<24}: {spread(rates[name])}, {ratio:.2f} of the baseline, "
                      f"{statistics.median(trips[name]):.2f} round trips per step", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
