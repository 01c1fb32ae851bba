"""Steps per second of `env.hold(a, 256, frames=False)` against single steps, in one run.

    uv run python bench/hold_rate.py            # starts its own platform in a temp dir
    uv run python bench/hold_rate.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import sys
import time

from bench_platform import add_platform_arguments, platform_url


def single_steps(env, seconds: float) -> float:
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            env.step(0)
        steps += 100
    return steps / (time.perf_counter() - start)


def held_steps(env, seconds: float, length: int) -> float:
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += env.hold(0, length, frames=False).steps
    return steps / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per figure")
    parser.add_argument("--steps", type=int, default=256, help="steps per hold")
    args = parser.parse_args()

    import platform_sdk

    with platform_url(args.url, "hold-rate") as url:
        for record in (False, True):
            # endless: the pole falling restarts in place, so every hold runs its full length
            with platform_sdk.connect("cartpole", url=url, kwargs={"endless": True}, record=record) as env:
                single = single_steps(env, args.seconds)
                held = held_steps(env, args.seconds, args.steps)
            label = "recorded" if record else "unrecorded"
            print(f"cartpole {label:>10}: single steps {single:,.0f} steps/s | hold({args.steps}, frames=False) "
                  f"{held:,.0f} steps/s ({held / single:.1f}x)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
