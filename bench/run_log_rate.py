"""What logging a training run costs: `platform_sdk.runs.Run.log` in a training loop, and how fast
the platform takes the points, against in-process Gymnasium CartPole steps in the same run.

Prints, as medians of --repeats alternating rounds with their min..max:
- the time of one in-process CartPole step (the baseline) and of one `run.log` of three values,
  and the log's cost as a fraction of a step (what logging every step adds to a local loop);
- ingest: points per second from the first `log` until `flush()` returns (every point accepted
  by the platform and stored), for --points points.

    uv run python bench/run_log_rate.py            # starts its own platform in a temp dir
    uv run python bench/run_log_rate.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
from bench_platform import add_platform_arguments, platform_url
from platform_sdk.runs import Run


def cartpole_step_s(steps: int) -> float:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset()
    return (time.perf_counter() - start) / steps


def log_call_s(run: Run, calls: int, first_step: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        run.log({"loss": 0.5, "episode/return": float(i), "lr": 3e-4}, step=first_step + i)
    return (time.perf_counter() - start) / calls


def ingest_rate(url: str, points: int) -> float:
    run = Run("bench-ingest", url=url, flush_every=0.2)
    start = time.perf_counter()
    for i in range(points // 2):
        run.log({"a": float(i), "b": 1.0}, step=i)
    if not run.flush(timeout=600):
        raise SystemExit("the platform did not take every point")
    elapsed = time.perf_counter() - start
    run.finish()
    return points / elapsed


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} ({min(values):.3g}..{max(values):.3g})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000, help="log calls per round")
    parser.add_argument("--points", type=int, default=100_000, help="points per ingest round")
    args = parser.parse_args()
    with platform_url(args.url, "runs") as url:
        steps, logs, ratios, ingests = [], [], [], []
        run = Run("bench-log-cost", url=url)
        for round_ in range(args.repeats):
            step = cartpole_step_s(args.calls)
            log = log_call_s(run, args.calls, round_ * args.calls)
            steps.append(step * 1e6)
            logs.append(log * 1e6)
            ratios.append(log / step)
            ingests.append(ingest_rate(url, args.points))
        run.finish(timeout=600)
        print(f"in-process CartPole step: {spread(steps)} us")
        print(f"run.log of 3 values:      {spread(logs)} us")
        print(f"log / step:               {spread(ratios)}")
        print(f"ingest (log to stored):   {spread(ingests)} points/s ({args.points} points a round)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
