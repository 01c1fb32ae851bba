"""Microseconds per vector step spent building, answering and decoding the batch, in one process.

`make_vec`'s own share of a step, without any transport: the SDK's `RemoteVectorEnv.step`
(building the `BatchRequest`, decoding the `BatchResponse`) and the instance's
`VectorInstance.handle`, joined by serializing and parsing the messages as the wire would.
Beside it, in-process `gymnasium.vector.SyncVectorEnv` of the same environments. Times are CPU
times of this process; each figure is the best of `--rounds` alternating rounds.

    uv run python bench/vector_codec.py --num-envs 64 --seconds 3
    uv run python bench/vector_codec.py --profile client   # cProfile of the SDK's share
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np
from platform_sdk.client.vector_env import RemoteVectorEnv
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.vector import VectorInstance
from simulusion.env.v1 import environment_pb2 as env_pb


def _clock() -> float:
    """CPU seconds of this process: all the work measured is in it, and other processes loading
    the machine count far less than in wall time."""
    return time.process_time()


class Timings:
    """Seconds spent in each part of the step, summed."""

    def __init__(self) -> None:
        self.instance = 0.0
        self.wire = 0.0


class InProcessVectorEnv(RemoteVectorEnv):
    """A `RemoteVectorEnv` whose requests go to a `VectorInstance` in this process."""

    def __init__(self, vector: VectorInstance, timings: Timings, **options: Any) -> None:
        self._vector = vector
        self._timings = timings
        super().__init__("bench", len(vector.subs), **options)

    def _open(self, env_id: str, *args: Any, **kwargs: Any) -> env_pb.SpecResponse:
        self.env_id, self.session_id, self._closed = env_id, "bench", False
        return self._vector.spec

    def _call(self, request: env_pb.EnvRequest, what: str, idempotent: bool = False) -> env_pb.EnvResponse:
        start = _clock()
        parsed = env_pb.EnvRequest.FromString(request.SerializeToString())
        middle = _clock()
        answer = self._vector.handle(parsed)
        end = _clock()
        response = env_pb.EnvResponse.FromString(answer.SerializeToString())
        self._timings.wire += middle - start + _clock() - end
        self._timings.instance += end - middle
        return response

    def _close_session(self) -> None:
        self._closed = True


def make(env_id: str, n: int, autoreset_mode: str) -> tuple[InProcessVectorEnv, Timings]:
    timings = Timings()
    vector = VectorInstance([EnvInstance(gym.make(env_id), env_id) for _ in range(n)])
    return InProcessVectorEnv(vector, timings, autoreset_mode=autoreset_mode), timings


def run(envs: Any, n: int, seconds: float) -> tuple[int, float]:
    envs.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, (1000, n))
    steps, start = 0, _clock()
    while _clock() - start < seconds:
        envs.step(actions[steps % 1000])
        steps += 1
    return steps, _clock() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--autoreset-mode", default="NextStep", help="NextStep or SameStep")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=("client", "all"), help="print a cProfile of the step loop")
    args = parser.parse_args()
    n = args.num_envs

    local = gym.vector.SyncVectorEnv([lambda: gym.make(args.env) for _ in range(n)])
    envs, timings = make(args.env, n, args.autoreset_mode)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run(envs, n, args.seconds)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        return 0
    base = total = client = instance = wire = float("inf")
    for _ in range(args.rounds):
        steps, elapsed = run(local, n, args.seconds)
        base = min(base, elapsed / steps * 1e6)
        timings.instance = timings.wire = 0.0
        steps, elapsed = run(envs, n, args.seconds)
        total = min(total, elapsed / steps * 1e6)
        instance = min(instance, timings.instance / steps * 1e6)
        wire = min(wire, timings.wire / steps * 1e6)
        client = min(client, (elapsed - timings.instance - timings.wire) / steps * 1e6)
    print(f"SyncVectorEnv of {n}: {base:,.0f} µs a step ({n / base * 1e6:,.0f} env steps/s)")
    print(f"in-process make_vec of {n} ({args.autoreset_mode}): {total:,.0f} µs a step "
          f"({base / total:.2f} of SyncVectorEnv)")
    print(f"  SDK build + decode {client:,.0f} µs ({client / n:.2f} µs per sub-environment), "
          f"instance {instance:,.0f} µs ({instance / n:.2f}), serialize + parse {wire:,.0f} µs ({wire / n:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
