"""The recorder's sustained write rate against the rate its sessions produce steps (issue 35).

Two workloads, each measured in alternating rounds on one platform:
  lockstep   one recorded CartPole session stepping in lockstep (`platform_sdk.connect`)
  vec64      a recorded `make_vec("cartpole", num_envs=64, record=True)` stepped flat out

For each round of a workload, two runs:
  drain      the recorder is stopped, the workload runs for `--seconds` (its events wait in
             JetStream), then the recorder is started and timed from its first write until it
             has written every step: the recorder's rate, measured apart from stepping.
  live       the recorder runs while the workload steps; the catch-up time is from the
             workload's end until every step is written (and every recording closed).

Printed: the production rate (steps/s while stepping), the recorder's rate, their ratio and the
catch-up time, as medians of the rounds with their range. `--profile DIR` records a py-spy
profile of the recorder during the first drain of each workload (py-spy in ~/.local/bin).

    uv run python bench/recorder_rate.py --seconds 10 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_platform import started_platform

WORKLOADS = ("lockstep", "vec64")
VECTOR_ENVS = 64


Run = tuple[int, float, list[str], list[int | None]]


def lockstep(url: str, seconds: float) -> Run:
    """Steps, seconds spent stepping, the recording ids and their last event seqs (None: the
    close says) of one lockstep CartPole session."""
    import platform_sdk

    with platform_sdk.connect("cartpole", url=url, record=True, auto_reset=True) as env:
        env.reset(seed=0)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(50):
                env.step(0)
            steps += 50
        elapsed = time.perf_counter() - start
        return steps, elapsed, [env.session_id], [None]


def vec64(url: str, seconds: float) -> Run:
    """Steps, seconds spent stepping, the sub-recording ids and their last event seqs (a reset,
    then one event per vector step) of a recorded make_vec of 64."""
    import platform_sdk

    actions = np.random.default_rng(0).integers(0, 2, (1000, VECTOR_ENVS))
    with platform_sdk.make_vec("cartpole", VECTOR_ENVS, url=url, record=True) as envs:
        envs.reset(seed=0)
        batches, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            envs.step(actions[batches % 1000])
            batches += 1
        elapsed = time.perf_counter() - start
        session_id = envs.session_id
    ids = [f"{session_id}-{i}" for i in range(VECTOR_ENVS)]
    return batches * VECTOR_ENVS, elapsed, ids, [batches + 1] * VECTOR_ENVS


RUNS: dict[str, Callable[[str, float], Run]] = {"lockstep": lockstep, "vec64": vec64}


def written_seqs(recordings: Path, ids: list[str], last_seqs: list[int | None]) -> tuple[int, bool] | None:
    """(the events written, whether a recording read `closed` before holding all of them) once
    every recording is closed and holds no part file; None before. `last_seqs`: each recording's
    last event seq (None: the close's `published_last_seq`). A recording's events are written
    when its finished episodes reach its last seq (their entries' `last_seq`; a long recording's
    sealed entries are in its `episode_lists` files: docs/recording-format.md)."""
    written, early = 0, False
    for folder, expected in zip((recordings / i for i in ids), last_seqs, strict=True):
        if not (folder / "meta.json").exists() or next(folder.glob("*.part"), None) is not None:
            return None
        try:
            meta = json.loads((folder / "meta.json").read_bytes())
            entries = list(meta.get("episodes") or [])
            if not entries and meta.get("episode_lists"):
                entries = json.loads((folder / meta["episode_lists"][-1]).read_bytes())
        except (OSError, ValueError):
            return None
        if meta.get("status") not in ("closed", "crashed"):
            return None
        expected = expected if expected is not None else meta.get("published_last_seq")
        last = max((int(e.get("last_seq") or 0) for e in entries), default=0)
        if expected is None or last < expected:
            early = True
            return None if expected is None else (written, early)
        written += last
    return written, early


def wait_written(recordings: Path, ids: list[str], last_seqs: list[int | None], timeout: float = 900.0) -> float:
    """Seconds until the recordings hold every event (and are closed); says so when a recording
    read `closed` before it held all its events."""
    start = time.perf_counter()
    said = False
    while True:
        found = written_seqs(recordings, ids, last_seqs)
        if found is not None and not found[1]:
            return time.perf_counter() - start
        if found is not None and not said:
            print(f"  a recording reads closed before all its events are written ({time.perf_counter() - start:.1f} s "
                  "after the run)", flush=True)
            said = True
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"not all events written within {timeout:.0f} s")
        time.sleep(0.1)


def profile(pid: int, out: Path, seconds: float) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy") or str(Path.home() / ".local/bin/py-spy")
    if not Path(spy).exists():
        print("py-spy not found: no profile", flush=True)
        return None
    return subprocess.Popen([spy, "record", "--nonblocking", "-p", str(pid), "-d", str(int(seconds)),
                             "-f", "raw", "-o", str(out)], stdout=subprocess.DEVNULL, stderr=(out.with_suffix(".log")).open("wb"))


def drain(platform, recordings: Path, workload: str, seconds: float,
          profile_to: Path | None) -> tuple[float, float]:
    """(production steps/s, recorder steps/s) of a run made while the recorder was stopped."""
    platform.stop_service("recorder", signal.SIGTERM)
    steps, elapsed, ids, last_seqs = RUNS[workload](platform.url, seconds)
    platform.start_service("recorder")
    # timed from its first write (the first recording's meta.json), not from its process's start
    while not (recordings / ids[0] / "meta.json").exists():
        time.sleep(0.01)
    spy = None
    if profile_to is not None:
        spy = profile(platform.pids()["recorder"], profile_to, seconds * 4)
    written_in = wait_written(recordings, ids, last_seqs)
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait()
    return steps / elapsed, steps / written_in


def live(platform, recordings: Path, workload: str, seconds: float) -> tuple[float, float]:
    """(production steps/s, catch-up seconds) of a run made while the recorder runs."""
    steps, elapsed, ids, last_seqs = RUNS[workload](platform.url, seconds)
    return steps / elapsed, wait_written(recordings, ids, last_seqs)


def spread(values: list[float], unit: str = "", digits: int = 0) -> str:
    fmt = f"{{:,.{digits}f}}"
    return (f"{fmt.format(statistics.median(values))}{unit} "
            f"(range {fmt.format(min(values))}..{fmt.format(max(values))}, n={len(values)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="stepping time of each run")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per workload (each: a drain and a live run)")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--profile", type=Path, help="folder for py-spy profiles of the first drains")
    args = parser.parse_args()
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)

    with started_platform("recorder-rate") as platform:
        recordings = platform.recordings_dir
        results: dict[str, dict[str, list[float]]] = {
            w: {"produced": [], "recorder": [], "ratio": [], "live": [], "catch_up": []} for w in args.workloads}
        for round_ in range(args.rounds):
            for workload in args.workloads:  # alternating: a drift of the machine weighs on each alike
                out = results[workload]
                to = args.profile / f"{workload}.txt" if args.profile is not None and round_ == 0 else None
                produced, rate = drain(platform, recordings, workload, args.seconds, to)
                out["produced"].append(produced)
                out["recorder"].append(rate)
                out["ratio"].append(rate / produced)
                produced_live, catch_up = live(platform, recordings, workload, args.seconds)
                out["live"].append(produced_live)
                out["catch_up"].append(catch_up)
                print(f"round {round_ + 1} {workload:<8}: produced {produced:,.0f} steps/s, recorder {rate:,.0f} "
                      f"steps/s ({rate / produced:.2f}); live run {produced_live:,.0f} steps/s, "
                      f"caught up {catch_up:.1f} s after", flush=True)
        print(f"\n{args.rounds} rounds of {args.seconds:g} s runs, pid {os.getpid()}:")
        for workload, out in results.items():
            print(f"{workload:<8} produced {spread(out['produced'], ' steps/s')}")
            print(f"{'':<8} recorder {spread(out['recorder'], ' steps/s')}")
            print(f"{'':<8} recorder/produced {spread(out['ratio'], digits=2)}")
            print(f"{'':<8} live run produced {spread(out['live'], ' steps/s')}, "
                  f"catch-up {spread(out['catch_up'], ' s', digits=1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
