"""Every service ends after SIGTERM, within the shutdown deadline, even when NATS goes down at
the same moment: the real launcher (`python -m platform_local`) is `kill -9`ed while a recorded
session steps, so nats-server, gateway, broker, recorder and env host all get their parent-death
SIGTERM at once (as when `bench/record_overhead.py`, running the platform in-process, was
stopped); then the broker alone is stopped right after NATS is killed, with sessions live.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import platform_sdk
from platform_bus import SHUTDOWN_DEADLINE_S
from platform_local.local_platform import free_port
from platform_local.procs import descendants, pid_alive
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for

BANNER = "Simulusion is running at"
START_S = 120.0  # the whole platform's start on a busy 2-core machine
MARGIN_S = 8.0  # past the deadline: the process's own start of shutdown and exit on 2 busy cores
SERVICES = ("gateway", "broker", "recorder", "envhost")


class Launcher:
    """`python -m platform_local` under `root` on free ports; its output in a file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = clean_env() | {"PLATFORM_PORT": str(self.port), "PLATFORM_NATS_PORT": str(free_port()),
                             "PLATFORM_DATA_DIR": str(root / "data"), "PLATFORM_RECORDINGS": str(root / "recordings"),
                             "PLATFORM_CACHE_DIR": str(root / "cache"),
                             # the launcher's warm pools and previews ahead: tests/web/test_first_frame.py's
                             "PLATFORM_POOLS": "", "PLATFORM_WARM_PREVIEWS": ""}
        self.out = (root / "launcher.out").open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "platform_local"], env=env, cwd=root,
                                        stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        text = (self.root / "launcher.out").read_text(errors="replace")
        logs = sorted((self.root / "data" / "logs").glob("*.log"))
        return text + "".join(f"\n--- {log.name}:\n{log.read_text(errors='replace')[-3000:]}" for log in logs)

    def wait_started(self) -> None:
        wait_for(lambda: BANNER in (self.root / "launcher.out").read_text() or self.process.poll() is not None,
                 timeout=START_S, what="the platform to start")
        assert self.process.poll() is None, f"the launcher exited:\n{self.output()}"

    def pids(self) -> dict[str, int]:
        """The running service and nats-server children, by name."""
        found = {}
        for pid in descendants(self.process.pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            for name in SERVICES:
                if argv[1:3] == [b"-m", f"platform_{name}".encode()]:
                    found[name] = pid
            if argv and Path(argv[0].decode(errors="replace")).name == "nats-server":
                found["nats"] = pid
        return found

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.out.close()


def keep_stepping(env: platform_sdk.RemoteEnv, stop: threading.Event) -> None:
    """Steps until `stop` or until the platform goes away (its error is the expected end)."""
    try:
        env.reset(seed=0)
        while not stop.is_set():
            _, _, terminated, truncated, _ = env.step(1)
            if terminated or truncated:
                env.reset()
    except Exception:  # noqa: BLE001, S110 - the platform was killed under it: that is the test
        pass


def assert_all_end(launcher: Launcher, pids: dict[str, int], began: float) -> None:
    limit = SHUTDOWN_DEADLINE_S + MARGIN_S
    try:
        wait_for(lambda: not [n for n, pid in pids.items() if pid_alive(pid)], timeout=limit,
                 what="every service to end")
    except AssertionError:
        left = {name: pid for name, pid in pids.items() if pid_alive(pid)}
        for pid in left.values():
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"still running {time.monotonic() - began:.1f} s after SIGTERM: {left}\n"
                             f"{launcher.output()}") from None


def test_every_service_ends_within_the_deadline_when_all_get_sigterm_while_a_recorded_session_steps(
        tmp_path: Path) -> None:
    launcher = Launcher(tmp_path)
    try:
        launcher.wait_started()
        pids = launcher.pids()
        assert set(pids) == {*SERVICES, "nats"}, pids
        env = platform_sdk.connect("cartpole", url=launcher.url, record=True)
        stop = threading.Event()
        stepper = threading.Thread(target=keep_stepping, args=(env, stop), daemon=True)
        stepper.start()
        wait_for(lambda: env.session_id is not None, timeout=30, what="the session")
        time.sleep(2.0)  # recorded steps in flight everywhere: env host, JetStream, recorder
        began = time.monotonic()
        launcher.process.kill()  # its children's parent-death signal: SIGTERM to all of them at once
        launcher.process.wait(10)
        assert_all_end(launcher, pids, began)
        stop.set()
        stepper.join(30)
        output = launcher.output()
        assert "graceful shutdown not done" not in output, output  # ended by their own shutdown, not the deadline
    finally:
        launcher.close()


def test_the_broker_ends_within_the_deadline_when_nats_dies_as_it_gets_sigterm(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path)
    try:
        launcher.wait_started()
        env = platform_sdk.connect("cartpole", url=launcher.url, record=True)
        env.reset(seed=0)
        for _ in range(20):
            env.step(1)
        pids = launcher.pids()
        broker = pids["broker"]
        began = time.monotonic()
        os.kill(pids["nats"], signal.SIGKILL)
        os.kill(broker, signal.SIGTERM)
        assert_all_end(launcher, {"broker": broker}, began)
    finally:
        launcher.close()
