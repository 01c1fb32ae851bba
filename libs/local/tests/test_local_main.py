"""`python -m platform_local` and the `platform-server` script as real processes: start,
Ctrl-C/SIGTERM, a service killed and started again, a crash loop, bad settings.

The services here are stand-ins (standin_service.py) put first on PYTHONPATH as packages
named platform_<service>, so the launcher runs them exactly as it runs the real ones.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from platform_local import SERVICES
from platform_local.launcher_defaults import DEFAULT_POOLS, pools_text
from platform_local.local_platform import free_port
from platform_local.procs import descendants, pid_alive

STANDIN = Path(__file__).with_name("standin_service.py")
BANNER = "Simulusion is running at"


@pytest.fixture
def standin_path(tmp_path: Path) -> Path:
    root = tmp_path / "standins"
    for name in SERVICES:
        package = root / f"platform_{name}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(
            f"import runpy, sys\nsys.argv = ['standin', {name!r}]\nrunpy.run_path({str(STANDIN)!r}, run_name='__main__')\n")
    return root


class Launcher:
    """`python -m platform_local` with its output read line by line in a thread."""

    def __init__(self, tmp_path: Path, standin_path: Path, script: bool = False, **env: str) -> None:
        self.port = free_port()
        self.record = tmp_path / "record.txt"
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PLATFORM_", "STANDIN_"))}
        clean.update(PYTHONPATH=str(standin_path), PLATFORM_DATA_DIR=str(tmp_path / "data"),
                     PLATFORM_RECORDINGS=str(tmp_path / "rec"), PLATFORM_PORT=str(self.port),
                     STANDIN_RECORD=str(self.record))
        clean.update(env)
        command = ([str(Path(sys.executable).with_name("platform-server")), "--port", str(self.port)] if script
                   else [sys.executable, "-m", "platform_local"])
        if script:
            del clean["PLATFORM_PORT"]  # the option sets it
        self.process = subprocess.Popen(command, env=clean, cwd=tmp_path,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if text in line:
                return line
        self.process.kill()
        raise AssertionError(f"no {text!r} from the launcher; stderr: {self.process.stderr.read()}")  # type: ignore[union-attr]

    def wait_until_all_started(self, timeout: float = 30) -> None:
        """Waits until every stand-in has set up its SIGTERM handler (it then writes its env line).

        The banner only says the gateway answers; on a loaded machine another stand-in may
        still be starting Python, and a signal then would end it before it can stop cleanly.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.record.read_text().splitlines() if self.record.exists() else []
            if {line.split()[0] for line in lines if line.split()[1:2] == ["env"]} >= set(SERVICES):
                return
            time.sleep(0.05)
        raise AssertionError(f"not every stand-in started within {timeout:g}s: {self.record.read_text()}")

    def finish(self, timeout: float = 30) -> int:
        code = self.process.wait(timeout)
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()
        return code


@pytest.mark.parametrize(("sig", "script"), [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_local_main_runs_until_signal_and_leaves_nothing(tmp_path: Path, standin_path: Path, sig: int,
                                                         script: bool) -> None:
    launcher = Launcher(tmp_path, standin_path, script=script)
    banner = launcher.wait_for(BANNER)
    assert banner == (f"Simulusion is running at http://127.0.0.1:{launcher.port}/ (the web app; API docs at /docs) "
                      "— Ctrl-C to stop")
    with urllib.request.urlopen(f"http://127.0.0.1:{launcher.port}/v0/envs", timeout=5) as response:
        assert response.status == 200
    launcher.wait_until_all_started()
    children = descendants(launcher.process.pid)
    assert len(children) >= 5  # nats + four services
    launcher.process.send_signal(sig)
    assert launcher.finish() == 0
    assert [p for p in children if pid_alive(p)] == []
    stopped = [line.split()[0] for line in launcher.record.read_text().splitlines() if line.endswith(" stopped")]
    assert stopped == list(reversed(SERVICES))
    assert (tmp_path / "data" / "nats" / "jetstream").is_dir()
    assert "broker starting" in (tmp_path / "data" / "logs" / "broker.log").read_text()


def service_pid(launcher: Launcher, name: str) -> int:
    """The pid of the stand-in running as platform_<name> under the launcher."""
    for pid in descendants(launcher.process.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"platform_{name}".encode() in argv:
            return pid
    raise AssertionError(f"no {name} among the launcher's children")


def test_local_main_starts_a_killed_service_again_and_says_why(tmp_path: Path, standin_path: Path) -> None:
    launcher = Launcher(tmp_path, standin_path)
    launcher.wait_for(BANNER)
    launcher.wait_until_all_started()
    gateway = service_pid(launcher, "gateway")
    os.kill(gateway, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{launcher.port}/v0/envs", timeout=2) as response:
                if response.status == 200 and service_pid(launcher, "gateway") != gateway:
                    break
        except (OSError, AssertionError):
            pass
        time.sleep(0.1)
    else:
        raise AssertionError("the gateway did not come back on its port")
    launcher.process.send_signal(signal.SIGINT)
    assert launcher.finish() == 0
    assert "platform-server: gateway was killed by SIGKILL; starting it again in 0.5 s" in launcher.stderr


def test_local_main_stops_on_a_crash_loop_with_the_last_lines(tmp_path: Path, standin_path: Path) -> None:
    launcher = Launcher(tmp_path, standin_path, STANDIN_ENVHOST="crash", STANDIN_CRASH_AFTER="0.2")
    launcher.wait_for(BANNER)
    children = descendants(launcher.process.pid)
    assert launcher.finish(timeout=60) == 1
    assert launcher.stderr.count("envhost exited with status 3; starting it again") == 4
    assert "platform-server: envhost crashed 5 times within 60 s: stopping the platform." in launcher.stderr
    assert "boom: crashed" in launcher.stderr.split("stopping the platform.")[1]
    assert [p for p in children if pid_alive(p)] == []


def test_local_main_bad_settings_exit_with_one_line(tmp_path: Path, standin_path: Path) -> None:
    launcher = Launcher(tmp_path, standin_path, PLATFORM_NATS_PORT="many")
    assert launcher.finish() == 1
    assert launcher.stderr.strip() == "platform-server: PLATFORM_NATS_PORT='many' is not a port number"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        launcher = Launcher(tmp_path, standin_path, PLATFORM_PORT=str(busy.getsockname()[1]))
        assert launcher.finish() == 1
    assert launcher.stderr.count("\n") == 1 and "is in use" in launcher.stderr


def test_local_main_bad_log_format_exits_with_one_line(tmp_path: Path, standin_path: Path) -> None:
    launcher = Launcher(tmp_path, standin_path, PLATFORM_LOG_FORMAT="yaml")
    assert launcher.finish() == 1
    assert launcher.stderr.strip() == "platform-server: PLATFORM_LOG_FORMAT='yaml' is not one of text, json"
    assert not (tmp_path / "data" / "logs").exists()  # nothing was started


def test_local_main_in_json_mode_writes_json_lines_only(tmp_path: Path, standin_path: Path) -> None:
    """PLATFORM_LOG_FORMAT=json: the launcher's lines, the children's echo and every log file are
    JSON objects, one a line; a child's JSON line passes through whole, its other lines (and
    nats-server's) are wrapped naming it."""
    launcher = Launcher(tmp_path, standin_path, PLATFORM_LOG_FORMAT="json")
    echoed = [launcher.lines.get(timeout=30)]
    while BANNER not in echoed[-1]:
        echoed.append(launcher.lines.get(timeout=30))
    banner = json.loads(echoed[-1])
    assert banner["service"] == "launcher" and banner["level"] == "INFO"
    launcher.wait_until_all_started()
    assert recorded_env(launcher, "broker")["PLATFORM_LOG_FORMAT"] == "json"  # the services read it too
    launcher.process.send_signal(signal.SIGTERM)
    assert launcher.finish() == 0
    time.sleep(0.2)  # the reading thread takes the last lines
    while not launcher.lines.empty():
        echoed.append(launcher.lines.get())
    for line in echoed + launcher.stderr.splitlines():
        assert isinstance(json.loads(line), dict), line
    assert json.loads(echoed[-1])["message"] == "Stopped."
    logs = {path.stem: path.read_text().splitlines() for path in (tmp_path / "data" / "logs").glob("*.log")}
    assert set(logs) == {"nats", *SERVICES}
    for name, lines in logs.items():
        parsed = [json.loads(line) for line in lines]
        assert parsed and all(line["service"] == name for line in parsed), (name, lines)
        assert all({"time", "level", "service", "logger", "message"} <= set(line) for line in parsed)
        if name != "nats":
            assert '"message": "logging in JSON"' in "\n".join(lines)  # passed through whole
            assert f"{name} starting (nats " in {line["message"][:len(name) + 16] for line in parsed}
            assert parsed[0]["logger"] == "platform_local" and " started, pid " in parsed[0]["message"]
    echoed_services = {json.loads(line)["service"] for line in echoed}
    assert echoed_services - {"launcher"}, echoed  # the children's lines, without a prefix


def recorded_env(launcher: Launcher, name: str) -> dict[str, str]:
    """The PLATFORM_* variables the stand-in of `name` ran with (its ``env`` line)."""
    for line in launcher.record.read_text().splitlines():
        service, kind, *rest = line.split(" ", 2)
        if service == name and kind == "env":
            return dict(json.loads(rest[0]))
    raise AssertionError(f"{name} wrote no env line: {launcher.record.read_text()}")


@pytest.mark.parametrize(("env", "pools", "previews"), [
    ({}, pools_text(DEFAULT_POOLS), "all"),
    ({"PLATFORM_POOLS": "", "PLATFORM_WARM_PREVIEWS": ""}, "", ""),
    ({"PLATFORM_POOLS": "pong=3", "PLATFORM_WARM_PREVIEWS": "cartpole"}, "pong=3", "cartpole"),
])
def test_local_main_keeps_default_pools_and_previews_ahead_unless_told_otherwise(
        tmp_path: Path, standin_path: Path, env: dict[str, str], pools: str, previews: str) -> None:
    launcher = Launcher(tmp_path, standin_path, **env)
    launcher.wait_for(BANNER)
    launcher.wait_until_all_started()
    assert recorded_env(launcher, "broker")["PLATFORM_POOLS"] == pools
    assert recorded_env(launcher, "gateway")["PLATFORM_WARM_PREVIEWS"] == previews
    if pools:
        launcher.wait_for(f"Warming instances in the background (PLATFORM_POOLS={pools})")
    launcher.process.send_signal(signal.SIGTERM)
    assert launcher.finish() == 0
