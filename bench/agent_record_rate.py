"""What recording costs the run command: `python -m platform_sdk.agents.run --env cartpole --agent
random --endless --steps N` unrecorded, with `--record`, and with `--record --life NAME
--max-frames M`, run alternately (off, record, life, off, ...) on one platform, in the same run.

Each run is timed from its process's start to its exit (the whole command, as a user waits for
it). Prints each case's median wall time and steps/s with the spread of its rounds, and the
ratios recorded / unrecorded (goal: at least 0.8), from the medians and run by run (each
recorded run against the unrecorded run of its round). A recorded run's next round starts once
the recorder has written it all, so its finishing work never slows the next run; how long after
the command's exit that was is printed too (the recorder's catch-up: it paints and encodes the
frames of CartPole, `platform_contracts.painted_frames`).

    uv run python bench/agent_record_rate.py                      # starts its own platform
    uv run python bench/agent_record_rate.py --rounds 5 --steps 20000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record_overhead import wait_recorded

CASES = ("unrecorded", "record", "record + life")


def run_command(url: str, steps: int, case: str, life: str, max_frames: int) -> tuple[float, dict]:
    """The wall time of one `agents.run` and its JSON summary (its last line)."""
    command = [sys.executable, "-m", "platform_sdk.agents.run", "--env", "cartpole", "--agent", "platform_sdk.agents.builtin:RandomAgent",
               "--endless", "--steps", str(steps), "--url", url]
    if case != "unrecorded":
        command.append("--record")
    if case == "record + life":
        command += ["--life", life, "--max-frames", str(max_frames)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{case}: agents.run exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return seconds, json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float]) -> str:
    return f"min {min(values):.3g}, max {max(values):.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--max-frames", type=int, default=20000)
    args = parser.parse_args()

    from platform_local import LocalPlatform

    data_dir = Path(tempfile.mkdtemp(prefix="bench-agent-record-"))
    recordings = data_dir / "recordings"
    print(f"starting a platform in {data_dir} ...", flush=True)
    platform = LocalPlatform(data_dir / "data", recordings_dir=recordings)
    platform.start()
    times: dict[str, list[float]] = {case: [] for case in CASES}
    catch_up: dict[str, list[float]] = {case: [] for case in CASES}
    try:
        for round_number in range(args.rounds):
            for case in CASES:
                life = f"bench-{os.getpid()}-{round_number}"
                seconds, summary = run_command(platform.url, args.steps, case, life, args.max_frames)
                times[case].append(seconds)
                line = f"round {round_number + 1} {case:>14}: {seconds:6.2f} s ({args.steps / seconds:6.0f} steps/s)"
                if case != "unrecorded":
                    exited = time.perf_counter()
                    wait_recorded(recordings / summary["session_id"])
                    catch_up[case].append(time.perf_counter() - exited)
                    line += f", recorded {catch_up[case][-1]:.1f} s after"
                print(line, flush=True)
    finally:
        platform.stop()
    print(f"\nagents.run cartpole random --endless --steps {args.steps}: medians of {args.rounds} alternating rounds")
    base = statistics.median(times["unrecorded"])
    for case in CASES:
        median = statistics.median(times[case])
        rates = [args.steps / t for t in times[case]]
        line = f"{case:>14}: {median:6.2f} s, {args.steps / median:6.0f} steps/s (rounds {spread(rates)} steps/s)"
        if case != "unrecorded":
            paired = [a / b for a, b in zip(times["unrecorded"], times[case], strict=True)]
            line += (f"; rate / unrecorded {base / median:.2f} "
                     f"(run by run median {statistics.median(paired):.2f}, {spread(paired)}); "
                     f"recorded {statistics.median(catch_up[case]):.1f} s after the exit ({spread(catch_up[case])} s)")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
