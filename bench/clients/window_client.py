"""A client process of a shared-window figure: connects its CartPole sessions, then steps them
in lockstep, one thread each, inside the window the coordinator hands out
(`shared_window.serve`). Started by bench/step_rate.py and bench/peer_rate.py, not by hand.

    python bench/clients/window_client.py --system platform --url URL --sessions 8 [--record]
    python bench/clients/window_client.py --system openenv --url URL --sessions 8  # scratch venv's python

Its folder is off `make bench`'s `bench/*.py`: the OpenEnv side imports `openenv`, which only
the scratch venv has.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from shared_window import Session, serve  # noqa: E402


class PlatformSession:
    """`platform_sdk.connect("cartpole")` as the SDK does it by default (whatever path it picks)."""

    def __init__(self, url: str, seed: int, record: bool) -> None:
        import platform_sdk

        self.env: Any = platform_sdk.connect("cartpole", url=url, record=record)
        self.env.reset(seed=seed)
        self.rng = random.Random(seed)

    def step(self) -> bool:
        _, _, terminated, truncated, _ = self.env.step(self.rng.randrange(2))
        return bool(terminated or truncated)

    def reset(self) -> None:
        self.env.reset()

    def path(self) -> str | None:
        """Which path the SDK's stream took, where the SDK says (`_stream.path`)."""
        path = getattr(getattr(self.env, "_stream", None), "path", None)
        return None if path is None else str(path)

    def close(self) -> None:
        self.env.close()


class OpenEnvSession:
    """OpenEnv's own client (`EnvClient` over its WebSocket), through its `.sync()` wrapper."""

    def __init__(self, url: str, seed: int) -> None:
        from openenv_cartpole import CartPoleAction, CartPoleClient

        self.action = CartPoleAction
        self.client: Any = CartPoleClient(base_url=url).sync()
        self.client.connect()
        self.client.reset(seed=seed)
        self.rng = random.Random(seed)

    def step(self) -> bool:
        return bool(self.client.step(self.action(action=self.rng.randrange(2))).done)

    def reset(self) -> None:
        self.client.reset()

    def path(self) -> str | None:
        return None

    def close(self) -> None:
        self.client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=("platform", "openenv"), required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--sessions", type=int, required=True)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--record", action="store_true", help="platform: record the sessions")
    parser.add_argument("--latencies", action="store_true", help="report every counted step's latency")
    args = parser.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.sessions)
    sessions: list[PlatformSession] | list[OpenEnvSession]
    if args.system == "platform":
        sessions = [PlatformSession(args.url, seed, args.record) for seed in seeds]
    else:
        sessions = [OpenEnvSession(args.url, seed) for seed in seeds]
    try:
        drivers: list[Session] = list(sessions)
        serve(drivers, args.latencies, {"paths": sorted({str(s.path()) for s in sessions})})
    finally:
        for session in sessions:
            session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
