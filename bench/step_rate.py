"""Step rate through the platform, against in-process Gymnasium CartPole in the same run.

Prints: in-process steps/s; remote steps/s through the SDK for 1 lockstep session and for 8
and 64 concurrent sessions, without and with recording; p50/p99 step latency of one session;
each remote figure as a ratio of the in-process one.

    uv run python bench/step_rate.py              # starts its own platform in a temp dir
    uv run python bench/step_rate.py --url http://127.0.0.1:8000   # an already running one
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np


def in_process_rate(seconds: float) -> float:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, 100_000)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for a in actions[:1000]:
            _, _, term, trunc, _ = env.step(int(a))
            if term or trunc:
                env.reset()
        steps += 1000
    return steps / (time.perf_counter() - start)


def _run_sessions(url: str, count: int, seconds: float, record: bool, out: mp.Queue, lockstep: bool) -> None:
    """One client process driving `count` sessions, one thread each, in lockstep."""
    import platform_sdk

    envs = [platform_sdk.connect("cartpole", url=url, record=record) for _ in range(count)]
    barrier = threading.Barrier(count + 1)
    counts = [0] * count
    latencies: list[float] = []
    stop_at = [0.0]

    def drive(i: int) -> None:
        env = envs[i]
        env.reset(seed=i)
        rng = np.random.default_rng(i)
        barrier.wait()
        while time.perf_counter() < stop_at[0]:
            t0 = time.perf_counter()
            _, _, term, trunc, _ = env.step(int(rng.integers(0, 2)))
            if lockstep:
                latencies.append(time.perf_counter() - t0)
            counts[i] += 1
            if term or trunc:
                env.reset()

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + 1e9
    barrier.wait()
    start = time.perf_counter()
    stop_at[0] = start + seconds
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    for env in envs:
        env.close()
    out.put((sum(counts), elapsed, latencies))


def remote_rate(url: str, sessions: int, seconds: float, record: bool) -> tuple[float, list[float]]:
    """Aggregate steps/s of `sessions` concurrent lockstep sessions (spread over client processes)."""
    # One client process per session up to 8, so the client's GIL is not what is measured.
    procs_n = min(sessions, 8)
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    shares = [sessions // procs_n + (1 if i < sessions % procs_n else 0) for i in range(procs_n)]
    procs = [
        ctx.Process(target=_run_sessions, args=(url, share, seconds, record, out, sessions == 1)) for share in shares
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    total = sum(r[0] for r in results)
    elapsed = max(r[1] for r in results)
    latencies = [x for r in results for x in r[2]]
    return total / elapsed, latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running platform (default: start one)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per figure")
    parser.add_argument("--sessions", default="1,8,64", help="concurrent session counts")
    args = parser.parse_args()

    platform = None
    url = args.url
    if url is None:
        from platform_local import LocalPlatform

        data_dir = Path(tempfile.mkdtemp(prefix="bench-step-rate-"))
        print(f"starting a platform in {data_dir} ...", flush=True)
        platform = LocalPlatform(data_dir)
        platform.start()
        url = platform.url
    try:
        base = in_process_rate(args.seconds)
        print(f"in-process gymnasium CartPole: {base:,.0f} steps/s")
        rows = []
        for record in (False, True):
            for n in (int(x) for x in args.sessions.split(",")):
                rate, latencies = remote_rate(url, n, args.seconds, record)
                label = f"{n:>3} session{'s' if n > 1 else ' '} {'recorded' if record else 'unrecorded'}"
                line = f"remote {label}: {rate:,.0f} steps/s ({rate / base:.4f} of in-process)"
                if latencies:
                    p50 = statistics.median(latencies) * 1e6
                    p99 = float(np.percentile(latencies, 99)) * 1e6
                    line += f", p50 {p50:,.0f} µs, p99 {p99:,.0f} µs"
                print(line, flush=True)
                rows.append((n, record, rate))
        for n in sorted({r[0] for r in rows}):
            off = next(r[2] for r in rows if r[0] == n and not r[1])
            on = next(r[2] for r in rows if r[0] == n and r[1])
            print(f"recording cost with {n} session(s): {100 * (1 - on / off):.1f}% of the unrecorded rate")
    finally:
        if platform is not None:
            platform.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
