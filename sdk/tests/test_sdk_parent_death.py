"""An environment server dies with the launcher that started it, asked through its environment
(`platform_sdk.launch.parent_death`), with no Python run between fork and exec."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from platform_sdk.launch.parent_death import DIE_WITH_PARENT_VARIABLE

LAUNCHER = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from platform_sdk.launch.instance_processes import LaunchSpec, launch_process

    async def main():
        instance = await launch_process(LaunchSpec(gymnasium_id="CartPole-v1"), Path(sys.argv[1]), "cartpole",
                                        transport="frames")
        print(instance.pid, flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
""")


def _dead(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet (its parent, the launcher, is dead)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_an_instance_dies_when_its_launcher_is_killed(tmp_path: Path) -> None:
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        line = launcher.stdout.readline() if launcher.stdout else ""
        assert line.strip().isdigit(), f"the launcher printed no instance pid: {line!r}"
        instance_pid = int(line)
        assert not _dead(instance_pid)
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not _dead(instance_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _dead(instance_pid), f"the instance {instance_pid} outlived its killed launcher"
    finally:
        launcher.kill()
        launcher.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_server_whose_launcher_died_before_it_started_ends_at_once() -> None:
    script = ("from platform_sdk.launch.parent_death import die_with_parent_if_asked\n"
              "die_with_parent_if_asked()\nprint('still running')")
    not_my_parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                                   env={**os.environ, DIE_WITH_PARENT_VARIABLE: "1"})
    assert not_my_parent.returncode == -signal.SIGKILL
    assert not_my_parent.stdout == ""
    script = ("import os\nfrom platform_sdk.launch.parent_death import die_with_parent_if_asked\n"
              f"die_with_parent_if_asked()\nprint(os.environ.get({DIE_WITH_PARENT_VARIABLE!r}, 'passed on to nobody'))")
    mine = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                          env={**os.environ, DIE_WITH_PARENT_VARIABLE: str(os.getpid())})
    assert (mine.returncode, mine.stdout.strip()) == (0, "passed on to nobody")
