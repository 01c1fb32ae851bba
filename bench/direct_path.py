"""One lockstep CartPole session over the direct path (SDK -> env host) against the gateway
path (SDK -> gateway -> env host), alternated in one run on one platform.

Prints, per round and path: steps/s, p50 and p99 step latency, and CPU per step of the client,
the gateway, the env host process and the environment instance.

    uv run python bench/direct_path.py [--steps 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from proc_cpu import cpu_seconds, cpu_used, sample_tree


def one_run(url: str, direct: bool, steps: int, pids: dict[str, int]) -> dict[str, float]:
    import platform_sdk

    actions = np.random.default_rng(0).integers(0, 2, steps).tolist()
    with platform_sdk.connect("cartpole", url=url, direct=direct) as env:
        assert env.step_path == ("direct" if direct else "gateway"), env.step_path
        env.reset(seed=0)
        for a in actions[:200]:  # warm up
            if env.step(a)[2]:
                env.reset()
        latencies = []
        gw, eh = pids["gateway"], pids["envhost"]
        gw0, eh0, tree0 = cpu_seconds(gw) or 0.0, cpu_seconds(eh) or 0.0, sample_tree([eh])
        client0, start = time.process_time(), time.perf_counter()
        for a in actions:
            t = time.perf_counter()
            _, _, term, trunc, _ = env.step(a)
            latencies.append(time.perf_counter() - t)
            if term or trunc:
                env.reset()
        wall = time.perf_counter() - start
        client = time.process_time() - client0
        gw1, eh1, tree1 = cpu_seconds(gw) or 0.0, cpu_seconds(eh) or 0.0, sample_tree([eh])
        cpu = {"gateway": gw1 - gw0, "envhost": eh1 - eh0, "instance": cpu_used(tree0, tree1) - (eh1 - eh0)}
        cpu = {name: seconds / steps * 1e6 for name, seconds in cpu.items()}
    latencies.sort()
    return {"steps_s": steps / wall, "p50_us": statistics.median(latencies) * 1e6,
            "p99_us": latencies[int(0.99 * len(latencies))] * 1e6, "client_us": client / steps * 1e6,
            **{f"{name}_us": value for name, value in cpu.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from platform_local import LocalPlatform

    platform = LocalPlatform(Path(tempfile.mkdtemp(prefix="bench-direct-")), None, {})
    platform.start()
    try:
        pids = {name: pid for name, pid in platform.pids().items() if name in ("gateway", "envhost")}
        print(f"cartpole, one lockstep session, {args.steps} steps a run, not recorded; CPU per step in µs "
              f"({os.cpu_count()} cores)")
        print(f"{'path':8} {'steps/s':>8} {'p50 µs':>7} {'p99 µs':>7} {'client':>7} {'gateway':>8} {'envhost':>8} "
              f"{'instance':>8}")
        results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
        for _ in range(args.rounds):
            for direct in (True, False):
                r = one_run(platform.url, direct, args.steps, pids)
                results[direct].append(r)
                print(f"{'direct' if direct else 'gateway':8} {r['steps_s']:8.0f} {r['p50_us']:7.0f} {r['p99_us']:7.0f} "
                      f"{r['client_us']:7.0f} {r['gateway_us']:8.0f} {r['envhost_us']:8.0f} {r['instance_us']:8.0f}",
                      flush=True)
        for direct in (True, False):
            rates = [r["steps_s"] for r in results[direct]]
            p50s = [r["p50_us"] for r in results[direct]]
            print(f"{'direct' if direct else 'gateway'}: {min(rates):.0f}-{max(rates):.0f} steps/s, "
                  f"p50 {min(p50s):.0f}-{max(p50s):.0f} µs")
    finally:
        platform.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
