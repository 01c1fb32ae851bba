"""`platform_envs.doom.engine_watchdog`: a Doom game's engine process dies with the Python process
that started it, even one killed with SIGKILL (which runs no exit handlers); a process that is
not a ViZDoom engine is never killed, and a normal exit leaves nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from doom_required import require_vizdoom
from platform_testing.waiting import wait_for

require_vizdoom()

# Starts a game (and, given a pid, has the watchdog watch that process too), prints the pids,
# then waits to be killed.
CHILD = textwrap.dedent("""
    import sys, time
    from platform_envs.doom import engine_watchdog, game, make_env
    env = make_env("basic")
    env.reset(seed=1)
    if len(sys.argv) > 1:
        engine_watchdog.watch(int(sys.argv[1]))
    print(*game._engines.values(), flush=True)
    if len(sys.argv) > 2:
        sys.exit(0)
    time.sleep(120)
""")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_child(*args: str) -> tuple[subprocess.Popen[str], list[int]]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    engines = [int(pid) for pid in child.stdout.readline().split()]
    assert len(engines) == 1 and alive(engines[0]), engines
    return child, engines


def test_the_engine_dies_with_a_process_killed_by_sigkill() -> None:
    bystander = subprocess.Popen(["sleep", "60"])  # watched too, but not a ViZDoom engine
    try:
        child, [engine] = start_child(str(bystander.pid))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        wait_for(lambda: not alive(engine), timeout=30, what=f"the engine {engine} of a SIGKILLed process to end")
        assert bystander.poll() is None, "a process that is not an engine was killed"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_normal_exit_leaves_no_engine() -> None:
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        child, [engine] = start_child(str(bystander.pid), "exit")
        assert child.wait(timeout=60) == 0
        wait_for(lambda: not alive(engine), timeout=30, what=f"the engine {engine} to end with its process")
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
