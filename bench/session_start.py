"""Time from asking for a new session to its first observation, without and with a warm pool.

Starts two platforms (one with `PLATFORM_POOLS=cartpole=2`) and times `connect` + `reset` for
several sessions on each, waiting between them so the pool can refill.

    uv run python bench/session_start.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench_platform import platform_url


def first_observation_s(url: str) -> float:
    import platform_sdk

    start = time.perf_counter()
    env = platform_sdk.connect("cartpole", url=url)
    env.reset(seed=0)
    elapsed = time.perf_counter() - start
    env.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8, help="sessions timed per platform")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between sessions (pool refill)")
    args = parser.parse_args()

    results = {}
    for label, env in (("no pool", {}), ("warm pool (cartpole=2)", {"PLATFORM_POOLS": "cartpole=2"})):
        with platform_url(None, "session-start", env) as url:
            time.sleep(args.pause * 2)  # let the pool fill
            times = []
            for _ in range(args.sessions):
                times.append(first_observation_s(url))
                time.sleep(args.pause)
            results[label] = times
            print(f"{label:<24} time to first observation: median {statistics.median(times) * 1000:,.0f} ms, "
                  f"min {min(times) * 1000:,.0f} ms, max {max(times) * 1000:,.0f} ms", flush=True)
    cold, warm = (statistics.median(t) for t in results.values())
    print(f"warm pool: {cold / warm:.1f}x faster to the first observation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
