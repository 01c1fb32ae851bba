"""Step rate through the platform, against in-process Gymnasium CartPole in the same run.

Prints: in-process steps/s; remote steps/s through the SDK for 1 lockstep session and for 8
and 64 concurrent sessions, without and with recording; p50/p99 step latency of one session;
each remote figure as a ratio of the in-process one. Every concurrent figure is one window shared
by all client processes (they connect, wait at a barrier, and count only the steps completed
between one common start and end: see shared_window.py).

    uv run python bench/step_rate.py              # starts its own platform in a temp dir
    uv run python bench/step_rate.py --url http://127.0.0.1:8000   # an already running one
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from shared_window import WindowRun, client_commands, run_window


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


def remote_run(url: str, sessions: int, seconds: float, record: bool) -> WindowRun:
    """`sessions` concurrent lockstep sessions over one window shared by all their client
    processes (`shared_window`); with a single session, each step's latency."""
    return run_window(client_commands(sys.executable, "platform", url, sessions, record), seconds)


def remote_rate(url: str, sessions: int, seconds: float, record: bool) -> tuple[float, list[float]]:
    """Aggregate steps/s of `remote_run`, and the latencies of a single session's steps."""
    run = remote_run(url, sessions, seconds, record)
    return run.rate, run.latencies


def stream_paths(run: WindowRun) -> str | None:
    """Which path the SDK's streams took (`_stream.path`), where the SDK says."""
    paths = sorted({p for r in run.results for p in r.get("paths", []) if p != "None"})
    return ", ".join(paths) or None


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
        told_path = False
        for record in (False, True):
            for n in (int(x) for x in args.sessions.split(",")):
                run = remote_run(url, n, args.seconds, record)
                rate, latencies = run.rate, run.latencies
                if not told_path and (path := stream_paths(run)):
                    print(f"SDK stream path: {path}")
                    told_path = True
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
