"""The agent loop's cost: `AgentLoop` (what the run command and `run_episodes` drive) against
raw SDK stepping, on CartPole through the platform, in the same run.

Prints, each as the median of alternating rounds with their spread:
- one session: raw `env.step` (auto-reset, random actions drawn ahead) vs the loop with an agent
  that returns the same actions (the loop's own work: the lists, act, compute_s as agent data,
  episode bookkeeping); the overhead is 1 - loop / raw (target: at most 5%);
- eight streams: `run_episodes`-style, one loop driving 8 sessions (stepped from threads), vs 8
  independent sessions each stepped raw by its own process over one shared window (as
  bench/step_rate.py does).

    uv run python bench/agent_loop.py              # starts its own platform in a temp dir
    uv run python bench/agent_loop.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import numpy as np
import platform_sdk
from bench_platform import add_platform_arguments, platform_url
from platform_sdk.agents.loop import AgentLoop
from shared_window import client_commands, run_window


class Replay:
    """Returns pre-drawn random actions: the agent costs as little as an agent can."""

    max_streams = 64

    def __init__(self, streams: int) -> None:
        # A thousand rows, cycled (a million small lists would make every garbage collection slow).
        self.actions = np.random.default_rng(0).integers(0, 2, (1000, streams)).tolist()
        self.i = 0

    def start(self, env: Any, streams: int) -> None:
        self.i = 0

    def act(self, observations: list[Any], rewards: list[Any], terminated: list[bool], truncated: list[bool],
            infos: list[dict[str, Any]]) -> list[int]:
        self.i += 1
        return self.actions[self.i % 1000]


def raw_rate(env: Any, seconds: float) -> float:
    actions = np.random.default_rng(0).integers(0, 2, 1000).tolist()
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for a in actions[steps % 1000:steps % 1000 + 100]:
            env.step(a)
        steps += 100
    return steps / (time.perf_counter() - start)


def loop_rate(envs: list[Any], seconds: float) -> float:
    loop = AgentLoop(Replay(len(envs)), envs, seeds=[0])
    loop.start()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            loop.step()
    rate = loop.decisions / (time.perf_counter() - start)
    loop.close()
    return rate


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):,.0f} (min {min(values):,.0f}, max {max(values):,.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per figure")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--streams", type=int, default=8)
    args = parser.parse_args()
    with platform_url(args.url, "agent-loop") as url:
        env = platform_sdk.connect("cartpole", url=url, auto_reset=True)
        raw, looped = [], []
        for _ in range(args.rounds):
            raw.append(raw_rate(env, args.seconds))
            looped.append(loop_rate([env], args.seconds))
        env.close()
        ratios = [b / a for a, b in zip(raw, looped, strict=True)]
        print(f"one session, raw env.step: {spread(raw)} steps/s")
        print(f"one session, AgentLoop: {spread(looped)} steps/s")
        print(f"loop overhead: {100 * (1 - statistics.median(ratios)):.1f}% (per round "
              f"{', '.join(f'{100 * (1 - r):.1f}%' for r in ratios)})", flush=True)

        n = args.streams
        envs = [platform_sdk.connect("cartpole", url=url, auto_reset=True) for _ in range(n)]
        independent, streams = [], []
        for _ in range(args.rounds):
            independent.append(run_window(client_commands(sys.executable, "platform", url, n, False),
                                          args.seconds).rate)
            streams.append(loop_rate(envs, args.seconds))
        for env in envs:
            env.close()
        ratios = [b / a for a, b in zip(independent, streams, strict=True)]
        print(f"{n} independent sessions (a process each): {spread(independent)} steps/s")
        print(f"one loop driving {n} streams: {spread(streams)} steps/s")
        print(f"{n} streams in one loop / {n} independent sessions: {statistics.median(ratios):.3f} "
              f"(per round {', '.join(f'{r:.3f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
