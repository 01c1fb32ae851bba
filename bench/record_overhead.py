"""What recording costs: remote steps/s with and without recording (and durable recording, each
step answered once its event is stored), the recorder's sustained
steps/s with frames (Pong) and without (CartPole), and bytes per step on disk, in one run.

The recorder's own rate is measured apart from stepping: the recorder is stopped, a recorded
session runs (its step events wait in JetStream), then the recorder is started and timed until
it has written them all.

    uv run python bench/record_overhead.py
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

# label: (catalog entry, session settings)
CASES: dict[str, tuple[str, dict]] = {
    "cartpole": ("cartpole", {}),
    # each step answered only once its event is stored in JetStream (SessionOptions.durable)
    "cartpole durable": ("cartpole", {"durable": True}),
    "pong": ("pong", {}),
    "pong + frames": ("pong", {"record_frames": True}),
}


def interleaved_rates(url: str, recordings: Path, env_id: str, seconds: float, rounds: int,
                      **settings) -> tuple[list[float], list[float]]:
    """Steps/s unrecorded and recorded, measured in alternating runs (off, on, off, on...) so
    that a drift of the machine's speed weighs on both alike. After a recorded run the next
    starts once the recorder has written it all: its finishing work must not slow the next
    unrecorded run (which would make recording look cheaper)."""
    off: list[float] = []
    on: list[float] = []
    for _ in range(rounds):
        off.append(stepping_rate(url, env_id, seconds, False)[0])
        rate, session_id = stepping_rate(url, env_id, seconds, True, **settings)
        on.append(rate)
        wait_recorded(recordings / session_id)
    return off, on


def cost_figure(off: list[float], on: list[float]) -> str:
    """What recording costs: from the medians, and the spread of the rounds' own costs (each
    recorded run against the unrecorded run just before it)."""
    cost = 100 * (1 - statistics.median(on) / statistics.median(off))
    paired = [100 * (1 - b / a) for a, b in zip(off, on, strict=True)]
    if len(paired) < 4:
        return f"recording costs {cost:.1f}%; medians of {len(off)} alternating runs"
    low, middle, high = statistics.quantiles(paired, n=4)
    return (f"recording costs {cost:.1f}%; medians of {len(off)} alternating runs; "
            f"run by run: median {middle:.1f}%, middle half {low:.1f}% to {high:.1f}%")


def stepping_rate(url: str, env_id: str, seconds: float, record: bool, **settings) -> tuple[float, str]:
    """Steps/s of one lockstep session stepping for `seconds`, and its session id."""
    import platform_sdk

    with platform_sdk.connect(env_id, url=url, record=record, auto_reset=True, **settings) as env:
        env.reset(seed=0)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(50):
                env.step(0)
            steps += 50
        return steps / (time.perf_counter() - start), env.session_id


def recorded_run(url: str, env_id: str, steps: int, **settings) -> tuple[str, int]:
    """A recorded session of `steps` steps; returns its id and its last event seq."""
    import platform_sdk

    with platform_sdk.connect(env_id, url=url, record=True, auto_reset=True, **settings) as env:
        env.reset(seed=0)
        for _ in range(steps):
            env.step(0)
        session_id = env.session_id
    return session_id, steps


def recording_done(folder: Path) -> dict | None:
    path = folder / "meta.json"
    if not path.exists():
        return None
    meta = json.loads(path.read_text())
    if meta.get("status") not in ("closed", "crashed") or meta.get("last_seq", 0) < meta.get("published_last_seq", 1):
        return None
    if any(folder.glob("*.part")):
        return None
    return meta


def wait_recorded(folder: Path, timeout: float = 600.0) -> None:
    start = time.perf_counter()
    while recording_done(folder) is None:
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"the recorder did not write {folder} within {timeout:.0f} s")
        time.sleep(0.02)


def drain_rate(platform, recordings: Path, env_id: str, steps: int, **settings) -> tuple[float, float]:
    """Recorder steps/s draining a backlog of `steps` steps, and bytes per step on disk."""
    platform.stop_service("recorder", signal.SIGTERM)
    session_id, _ = recorded_run(platform.url, env_id, steps, **settings)
    folder = recordings / session_id
    platform.start_service("recorder")
    start = time.perf_counter()
    wait_recorded(folder)
    elapsed = time.perf_counter() - start
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return steps / elapsed, size / steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Many short alternating runs: on a shared machine a figure moves by several points from one
    # run to the next; 15 pairs give a median and a spread worth reading (~5 minutes in all).
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per stepping run")
    parser.add_argument("--rounds", type=int, default=15, help="alternating unrecorded/recorded runs per figure")
    parser.add_argument("--steps", type=int, default=6000, help="steps of each backlog the recorder drains")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES),
                        help="which sessions to measure (default: all)")
    args = parser.parse_args()
    cases = [(label, *CASES[label]) for label in args.cases]

    from platform_local import LocalPlatform

    data_dir = Path(tempfile.mkdtemp(prefix="bench-record-overhead-"))
    recordings = data_dir / "recordings"
    print(f"starting a platform in {data_dir} ...", flush=True)
    platform = LocalPlatform(data_dir / "data", recordings_dir=recordings)
    platform.start()
    try:
        for label, env_id, settings in cases:
            off, on = interleaved_rates(platform.url, recordings, env_id, args.seconds, args.rounds, **settings)
            print(f"{label:<16} remote: unrecorded {statistics.median(off):,.0f} steps/s, recorded "
                  f"{statistics.median(on):,.0f} steps/s ({cost_figure(off, on)})", flush=True)
        for label, env_id, settings in cases:
            rate, per_step = drain_rate(platform, recordings, env_id, args.steps, **settings)
            print(f"{label:<16} recorder sustained: {rate:,.0f} steps/s; on disk {per_step:,.0f} bytes/step",
                  flush=True)
    finally:
        platform.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
