"""Robots' speed: the Menagerie tasks in process and through the platform, against CartPole.

Prints, each figure measured in this run:

- in-process gymnasium CartPole steps/s (the baseline of the in-process figures);
- in-process steps/s of Panda reach at substeps 100 (joint control, random actions), of H1
  walk (random actions) and of pick and place on each arm played by its teacher (hand_steps:
  each step includes the teacher's suggestion and hand control's IK), each as a ratio of
  CartPole's;
- hand control's IK time per decision (median and p99 over the pick and place steps);
- render + JPEG of one 240x320 frame (median and p99; JPEG by the platform's own encoder,
  platform_contracts.frames.jpeg_bytes at its default quality; target <= 5 ms);
- the teacher's success rate and mean steps over seeded episodes (seeds 0..N-1) of each arm;
- session steps/s through a running platform: one lockstep session (`platform_sdk.connect`,
  each step waiting for its answer) of CartPole with random actions, the baseline, then one of
  Panda pick and place playing the teacher's suggestions (info["teacher_action"]), as a
  ratio of CartPole's.

The pick and place session uses the catalog's menagerie-franka-emika-panda-pick-place when
the platform lists it; a platform this script starts gets, otherwise, a catalog.toml entry of
its own for the same factory and kwargs (`bench-pick-place`). Robots come from
MENAGERIE_ROOT (default: ../shared/menagerie beside the checkout, where it exists).

    uv run python bench/robots_rate.py                # starts its own platform in a temp dir
    uv run python bench/robots_rate.py --url http://127.0.0.1:8000
    uv run python bench/robots_rate.py --no-platform  # in-process figures only
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from bench_platform import platform_url
from step_rate import in_process_rate

REPO = Path(__file__).resolve().parents[1]
PICK_PLACE_ENTRY = "menagerie-franka-emika-panda-pick-place"
BENCH_ENTRY = "bench-pick-place"
ARMS = ("franka_emika_panda", "ufactory_xarm7")


def _menagerie_root() -> None:
    """Point MENAGERIE_ROOT at the robots beside the checkout when the run does not set it."""
    local = REPO.parent / "shared" / "menagerie"
    if "MENAGERIE_ROOT" not in os.environ and local.is_dir():
        os.environ["MENAGERIE_ROOT"] = str(local)


def _rate(env: Any, seconds: float, act: Callable[[Any], Any], seed: int = 0) -> float:
    """Steps/s of `env` over `seconds`, each action from `act(info)`, resetting at episode ends."""
    _, info = env.reset(seed=seed)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        _, _, terminated, truncated, info = env.step(act(info))
        steps += 1
        if terminated or truncated:
            seed += 1
            _, info = env.reset(seed=seed)
    return steps / (time.perf_counter() - started)


def _random_actions(env: Any) -> Callable[[Any], Any]:
    env.action_space.seed(0)
    return lambda _info: env.action_space.sample()


def _teacher(info: Any) -> Any:
    return info["teacher_action"]


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def in_process_figures(seconds: float, episodes: int, base: float) -> None:
    from platform_envs.robots.arm_reach import ArmReachEnv
    from platform_envs.robots.pick_place import PickPlaceEnv

    reach = ArmReachEnv("franka_emika_panda", substeps=100)
    rate = _rate(reach, seconds, _random_actions(reach))
    print(
        f"in-process Panda reach (substeps 100, joints): {rate:,.0f} steps/s ({rate / base:.4f} of CartPole)"
    )
    reach.close()

    walk = _humanoid_walk()
    if walk is not None:
        rate = _rate(walk, seconds, _random_actions(walk))
        print(f"in-process H1 walk: {rate:,.0f} steps/s ({rate / base:.4f} of CartPole)")
        walk.close()

    for robot in ARMS:
        env = PickPlaceEnv(robot)
        controller = env.hand_controller
        assert controller is not None
        ik_times: list[float] = []

        def act(info: Any, controller: Any = controller, ik_times: list[float] = ik_times) -> Any:
            if controller.ik_decisions:
                ik_times.append(controller.last_ik_seconds)
            return info["teacher_action"]

        rate = _rate(env, seconds, act)
        print(
            f"in-process {robot} pick and place, teacher playing: {rate:,.0f} steps/s "
            f"({rate / base:.4f} of CartPole); IK per decision median "
            f"{statistics.median(ik_times) * 1e3:.2f} ms, p99 {_percentile(ik_times, 99) * 1e3:.2f} ms"
        )
        render_ms = _render_jpeg_ms(robot)
        print(
            f"render + JPEG of a 240x320 {robot} pick and place frame: median "
            f"{statistics.median(render_ms):.2f} ms, p99 {_percentile(render_ms, 99):.2f} ms (target <= 5 ms)"
        )
        successes, steps = _teacher_episodes(env, episodes)
        mean = f"{statistics.mean(steps):.1f}" if steps else "-"
        print(
            f"teacher on {robot}: {successes}/{episodes} episodes placed (seeds 0..{episodes - 1}), {mean} steps on average"
        )
        env.close()


def _humanoid_walk() -> Any:
    """The H1 walk task through the catalog's factory, or None (said) when it is not there."""
    from platform_envs.robots import RobotError, make_env

    try:
        return make_env("unitree_h1", "walk")
    except (ImportError, RobotError) as exc:
        print(f"H1 walk: not measured ({type(exc).__name__}: {exc})")
        return None


def _render_jpeg_ms(robot: str, frames: int = 60) -> list[float]:
    from platform_contracts.frames import jpeg_bytes
    from platform_contracts.limits import DEFAULT_JPEG_QUALITY

    from platform_envs.robots.pick_place import PickPlaceEnv

    env = PickPlaceEnv(robot, render_mode="rgb_array")
    _, info = env.reset(seed=0)
    env.render()  # the first frame opens the GL context: not counted
    times = []
    for _ in range(frames):
        _, _, _, _, info = env.step(info["teacher_action"])
        started = time.perf_counter()
        frame = env.render()
        jpeg_bytes(np.ascontiguousarray(frame), DEFAULT_JPEG_QUALITY)
        times.append((time.perf_counter() - started) * 1e3)
    env.close()
    return times


def _teacher_episodes(env: Any, episodes: int) -> tuple[int, list[int]]:
    """How many of `episodes` seeded episodes the teacher completes, and their lengths."""
    successes, lengths = 0, []
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        steps = 0
        while True:
            _, _, terminated, truncated, info = env.step(info["teacher_action"])
            steps += 1
            if terminated or truncated:
                break
        if info["is_success"]:
            successes += 1
            lengths.append(steps)
    return successes, lengths


def session_rate(
    url: str, env_id: str, seconds: float, act: Callable[[Any, Any], Any], kwargs: Any = None
) -> float:
    """Steps/s of one lockstep session of `env_id` on the platform at `url`."""
    import platform_sdk

    env = platform_sdk.connect(env_id, url=url, kwargs=kwargs)
    try:
        _, info = env.reset(seed=0)
        for _ in range(20):  # warm up: the first steps open the connection's paths
            _, _, terminated, truncated, info = env.step(act(env, info))
            if terminated or truncated:
                _, info = env.reset()
        steps, started, seed = 0, time.perf_counter(), 1
        while time.perf_counter() - started < seconds:
            _, _, terminated, truncated, info = env.step(act(env, info))
            steps += 1
            if terminated or truncated:
                _, info = env.reset(seed=seed)
                seed += 1
        return steps / (time.perf_counter() - started)
    finally:
        env.close()


def _catalog_ids(url: str) -> set[str]:
    import httpx

    answer = httpx.get(f"{url}/v0/envs", timeout=30)
    answer.raise_for_status()
    return {entry["id"] for entry in answer.json()["data"]}


@contextlib.contextmanager
def _platform(url: str | None) -> Iterator[tuple[str, str]]:
    """The platform's URL and the pick and place entry to use (see the module docstring)."""
    if url is not None:
        yield url, PICK_PLACE_ENTRY
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-robots-catalog-"))
    catalog = folder / "catalog.toml"
    catalog.write_text(
        f'[envs.{BENCH_ENTRY}]\nfactory = "platform_envs.robots.pick_place:PickPlaceEnv"\n'
        'kwargs = { robot = "franka_emika_panda", control = "hand_steps" }\n'
        'description = "Panda pick and place (bench/robots_rate.py)"\n'
    )
    extra = {"PLATFORM_CATALOG": str(catalog), "MENAGERIE_ROOT": os.environ.get("MENAGERIE_ROOT", "")}
    with platform_url(None, "robots-rate", extra) as started:
        entry = PICK_PLACE_ENTRY if PICK_PLACE_ENTRY in _catalog_ids(started) else BENCH_ENTRY
        yield started, entry


def platform_figures(url: str | None, seconds: float) -> None:
    with _platform(url) as (address, entry):
        rng = np.random.default_rng(0)
        base = session_rate(address, "cartpole", seconds, lambda _env, _info: int(rng.integers(2)))
        print(f"session CartPole (lockstep, random actions): {base:,.0f} steps/s")
        rate = session_rate(address, entry, seconds, lambda _env, info: info["teacher_action"])
        print(
            f"session Panda pick and place ({entry}, teacher playing): {rate:,.0f} steps/s ({rate / base:.4f} of CartPole)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running platform (default: start one)")
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per figure")
    parser.add_argument("--episodes", type=int, default=20, help="teacher episodes per arm")
    parser.add_argument("--no-platform", action="store_true", help="in-process figures only")
    args = parser.parse_args()
    _menagerie_root()
    from platform_envs.adapters.mujoco_rendering import select_gl_backend

    select_gl_backend()
    base = in_process_rate(args.seconds)
    print(f"in-process gymnasium CartPole: {base:,.0f} steps/s")
    in_process_figures(args.seconds, args.episodes, base)
    if not args.no_platform:
        platform_figures(args.url, args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
