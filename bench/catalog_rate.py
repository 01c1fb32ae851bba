"""Steps per second of one environment of each catalog family, in-process vs through a session,
and render + JPEG frames per second, in one run.

    uv run python bench/catalog_rate.py              # starts its own platform in a temp dir
    uv run python bench/catalog_rate.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import simplejpeg

# catalog id -> (factory, kwargs) used in-process: the same code the session runs.
FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "cartpole": ("gymnasium:make", {"id": "CartPole-v1", "render_mode": "rgb_array"}),
    "pong": ("platform_envs.adapters.atari:make_env", {"game": "pong"}),
    "dmc-cartpole-swingup": ("platform_envs.adapters.dmc:make_env", {"domain": "cartpole", "task": "swingup"}),
    "halfcheetah": ("platform_envs.adapters.gym_mujoco:make_env", {"task": "HalfCheetah"}),
}


def build(factory: str, kwargs: dict[str, Any]) -> Any:
    import importlib

    module, name = factory.split(":")
    return getattr(importlib.import_module(module), name)(**kwargs)


def rate(step_once, seconds: float) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step_once()
        count += 1
    return count / (time.perf_counter() - start)


def stepper(env: Any):
    env.reset(seed=0)
    space = env.action_space
    space.seed(0)

    def step_once() -> None:
        _, _, terminated, truncated, _ = env.step(space.sample())
        if terminated or truncated:
            env.reset()

    return step_once


def in_process(env_id: str, seconds: float) -> tuple[float, float, tuple[int, int]]:
    """Steps/s and render+JPEG frames/s of one family in this (fresh) process."""
    factory, kwargs = FAMILIES[env_id]
    local = build(factory, kwargs)
    steps = rate(stepper(local), seconds)
    local.reset(seed=0)
    frame = local.render()
    frames = rate(lambda: simplejpeg.encode_jpeg(np.ascontiguousarray(local.render()), quality=90), seconds)
    local.close()
    return steps, frames, frame.shape[:2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()

    import platform_sdk

    platform = None
    url = args.url
    if url is None:
        from platform_local import LocalPlatform

        platform = LocalPlatform(Path(tempfile.mkdtemp(prefix="bench-catalog-")))
        platform.start()
        url = platform.url
    try:
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        for env_id in FAMILIES:
            # Each family in a fresh process, so one backend's threads or GL state cannot slow another.
            local_rate, local_frames, size = pool.submit(in_process, env_id, args.seconds).result()
            with platform_sdk.connect(env_id, url=url) as remote:
                remote_rate = rate(stepper(remote), args.seconds)
                remote_frames = rate(remote.render, args.seconds)
            print(
                f"{env_id:<22} in-process {local_rate:>9,.0f} steps/s | session {remote_rate:>7,.0f} steps/s "
                f"({remote_rate / local_rate:.3f}) | render+JPEG {size[0]}x{size[1]}: in-process "
                f"{local_frames:>6,.0f} frames/s, session {remote_frames:>6,.0f} frames/s",
                flush=True,
            )
        pool.shutdown()
    finally:
        if platform is not None:
            platform.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
