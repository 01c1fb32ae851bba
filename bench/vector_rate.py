"""Aggregate steps/s of `platform_sdk.make_vec` with 8 and 64 CartPole environments, with and
without recording, beside in-process `gymnasium.vector.SyncVectorEnv` in the same run.

    uv run python bench/vector_rate.py           # starts its own platform in a temp dir
    uv run python bench/vector_rate.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import sys
import time

import gymnasium as gym
import numpy as np
from bench_platform import add_platform_arguments, platform_url


def rate(envs, num_envs: int, seconds: float) -> float:
    envs.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, (1000, num_envs))
    batches, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        envs.step(actions[batches % 1000])
        batches += 1
    return batches * num_envs / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per figure")
    parser.add_argument("--num-envs", default="8,64", help="vector sizes")
    args = parser.parse_args()

    import platform_sdk

    sizes = [int(n) for n in args.num_envs.split(",")]
    with platform_url(args.url, "vector-rate") as url:
        for n in sizes:
            local = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(n)])
            base = rate(local, n, args.seconds)
            local.close()
            print(f"{n:>3} envs in-process SyncVectorEnv: {base:,.0f} steps/s", flush=True)
            for record in (False, True):
                with platform_sdk.make_vec("cartpole", n, url=url, record=record) as envs:
                    remote = rate(envs, n, args.seconds)
                label = "recorded" if record else "unrecorded"
                print(f"{n:>3} envs make_vec {label:>10}: {remote:,.0f} steps/s ({remote / base:.2f} of "
                      "SyncVectorEnv)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
