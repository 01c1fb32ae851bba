"""LocalPlatform with a real nats-server and stand-in services (see standin_service.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from platform_local import SERVICES, ConfigError, CrashLoop, LocalPlatform, ServiceExited
from platform_local.procs import pid_alive
from platform_local.restarts import RestartPolicy
from platform_local.services import missing_services

STANDIN = Path(__file__).with_name("standin_service.py")


def standins(names: tuple[str, ...] = SERVICES) -> dict[str, list[str]]:
    return {name: [sys.executable, str(STANDIN), name] for name in names}


def events(record: Path) -> list[tuple[str, str]]:
    if not record.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in record.read_text().splitlines()]  # type: ignore[misc]


def wait_until_started(record: Path, names: tuple[str, ...] = SERVICES, timeout: float = 20.0) -> None:
    """Until each stand-in of `names` has noted its start (after it set up its SIGTERM handling).
    The launcher waits for the gateway only: a stand-in still starting when the test stops the
    platform would die of the SIGTERM without noting it."""
    deadline = time.monotonic() + timeout
    while not set(names) <= {name for name, event in events(record) if event.startswith("env ")}:
        assert time.monotonic() < deadline, f"not all of {names} started within {timeout} s: {events(record)}"
        time.sleep(0.05)


def make_platform(tmp_path: Path, **kwargs: object) -> LocalPlatform:
    record = tmp_path / "record.txt"
    extra = {"STANDIN_RECORD": str(record), **kwargs.pop("extra", {})}  # type: ignore[dict-item]
    return LocalPlatform(tmp_path / "data", extra_env=extra, commands=standins(), start_timeout=20,
                         stop_timeout=5, base_env={"PATH": "/usr/bin:/bin"}, **kwargs)  # type: ignore[arg-type]


def test_local_start_serves_and_stops_in_reverse_order(tmp_path: Path) -> None:
    record = tmp_path / "record.txt"
    platform = make_platform(tmp_path)
    with platform:
        with urllib.request.urlopen(platform.url + "/v0/envs", timeout=5) as response:
            assert response.status == 200
        pids = platform.pids()
        assert set(pids) == {"nats", *SERVICES}
        with socket.create_connection(("127.0.0.1", platform.nats_port), timeout=5) as sock:
            assert sock.recv(4096).startswith(b"INFO ")  # a real NATS server greets
        assert (tmp_path / "data" / "nats" / "jetstream").is_dir()
        wait_until_started(record)
    assert not any(pid_alive(pid) for pid in pids.values())
    stopped = [name for name, event in events(record) if event == "stopped"]
    assert stopped == list(reversed(SERVICES))
    envs = {name: json.loads(event[4:]) for name, event in events(record) if event.startswith("env ")}
    for name, env in envs.items():
        assert env["PLATFORM_NATS_URL"] == platform.nats_url
        assert env["PLATFORM_DATABASE_URL"].endswith(str(tmp_path / "data" / "platform.db"))
        assert env["PLATFORM_RECORDINGS"] == str(tmp_path / "data" / "recordings")
        assert env["PLATFORM_WADS"] == str(tmp_path / "data" / "wads")  # the gateway's uploads, the env hosts' copies
        assert ("PLATFORM_PORT" in env) == (name == "gateway")  # only the gateway sees its port
    assert envs["gateway"]["PLATFORM_PORT"] == str(platform.port)
    assert "--- broker started" in (tmp_path / "data" / "logs" / "broker.log").read_text()


def test_local_child_failing_at_start_names_it_and_stops_the_rest(tmp_path: Path) -> None:
    platform = make_platform(tmp_path, extra={"STANDIN_BROKER": "fail"})
    with pytest.raises(ServiceExited) as caught:
        platform.start()
    assert caught.value.name == "broker"
    assert caught.value.returncode == 3
    assert "boom: bad settings" in caught.value.report()
    assert platform.pids() == {}


def test_local_crash_after_start_is_reported(tmp_path: Path) -> None:
    platform = make_platform(tmp_path, extra={"STANDIN_RECORDER": "crash", "STANDIN_CRASH_AFTER": "0.5"})
    with platform:
        deadline = time.monotonic() + 10
        while (error := platform.unexpected_exit()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert error is not None and error.name == "recorder"
        assert error.tail[-1] == "boom: crashed"
    assert platform.pids() == {}


def test_local_restart_and_kill_one_service(tmp_path: Path) -> None:
    platform = make_platform(tmp_path)
    with platform:
        old = platform.pids()
        platform.restart("broker")
        assert platform.pids()["broker"] != old["broker"] and not pid_alive(old["broker"])
        assert platform.stop_service("envhost", signal.SIGKILL) == -signal.SIGKILL
        assert "envhost" not in platform.pids()
        assert platform.unexpected_exit() is None  # asked for: not a failure
        platform.start_service("envhost")
        nats_port = platform.nats_port
        platform.restart("nats")
        assert platform.nats_port == nats_port and platform.pids()["nats"] != old["nats"]
        platform.check()


def test_local_stubborn_child_is_killed_after_the_timeout(tmp_path: Path) -> None:
    platform = make_platform(tmp_path, extra={"STANDIN_ENVHOST": "stubborn"})
    platform.stop_timeout = 0.5
    with platform:
        pid = platform.pids()["envhost"]
        wait_until_started(tmp_path / "record.txt", ("envhost",))  # ignoring SIGTERM from then on
    assert platform.supervisor["envhost"].returncode == -signal.SIGKILL
    assert not pid_alive(pid)


def test_local_busy_port_and_missing_package_fail_before_starting(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        platform = make_platform(tmp_path, port=busy.getsockname()[1])
        with pytest.raises(ConfigError, match="in use"):
            platform.start()
    assert missing_services(["gateway-that-does-not-exist"]) == ["gateway-that-does-not-exist"]
    with pytest.raises(ConfigError, match="unknown service"):
        LocalPlatform(tmp_path / "data", services=("mystery",)).start()


def test_local_restart_delays_double_up_to_the_cap() -> None:
    policy = RestartPolicy(first_delay=0.5, max_delay=8.0)
    assert [policy.delay(n) for n in range(1, 7)] == [0.5, 1, 2, 4, 8, 8]


def test_local_a_crashed_service_is_started_again_with_its_reason_said(tmp_path: Path) -> None:
    said: list[str] = []
    platform = make_platform(tmp_path, extra={"STANDIN_RECORDER": "crash-once", "STANDIN_CRASH_AFTER": "0.3"},
                             restart_policy=RestartPolicy(first_delay=0.1), say=said.append)
    with platform:
        first = platform.pids()["recorder"]
        deadline = time.monotonic() + 20
        while platform.restarts.restarts["recorder"] == 0 and time.monotonic() < deadline:  # type: ignore[union-attr]
            platform.keep_running()
            time.sleep(0.05)
        again = platform.pids()["recorder"]
        assert again != first and not pid_alive(first)
        assert len(said) == 1, said
        assert said[0].startswith("recorder exited with status 3; starting it again in 0.1 s (crash 1 within 60 s")
        assert said[0].splitlines()[-1].strip() == "boom: crashed"
        time.sleep(0.5)  # the second run serves
        platform.keep_running()
        assert platform.pids()["recorder"] == again
    log = (tmp_path / "data" / "logs" / "recorder.log").read_text()
    assert log.count("--- recorder started") == 2
    assert "--- recorder exited with status 3" in log


def test_local_a_killed_gateway_comes_back_on_the_same_port(tmp_path: Path) -> None:
    platform = make_platform(tmp_path, restart_policy=RestartPolicy(first_delay=0.1), say=lambda _: None)
    with platform:
        port, pid = platform.port, platform.pids()["gateway"]
        os.kill(pid, signal.SIGKILL)  # unasked: the supervisor did not send it
        deadline = time.monotonic() + 20
        while platform.pids().get("gateway") in (None, pid) and time.monotonic() < deadline:
            platform.keep_running()
            time.sleep(0.05)
        platform.wait_ready(timeout=20)
        assert platform.port == port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v0/envs", timeout=5) as response:
            assert response.status == 200


def test_local_a_crash_loop_stops_with_the_last_lines(tmp_path: Path) -> None:
    said: list[str] = []
    platform = make_platform(tmp_path, extra={"STANDIN_RECORDER": "crash", "STANDIN_CRASH_AFTER": "0.1"},
                             restart_policy=RestartPolicy(max_crashes=3, first_delay=0.05), say=said.append)
    with platform, pytest.raises(CrashLoop) as caught:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            platform.keep_running()
            time.sleep(0.05)
    assert caught.value.name == "recorder" and caught.value.crashes == 3 and caught.value.returncode == 3
    assert caught.value.report().startswith("recorder crashed 3 times within 60 s: stopping the platform.")
    assert "boom: crashed" in caught.value.report()
    assert len(said) == 2  # two restarts, then the third crash stops it
    assert platform.pids() == {}


def test_local_a_service_failing_at_every_start_ends_the_start_as_a_crash_loop(tmp_path: Path) -> None:
    platform = make_platform(tmp_path, extra={"STANDIN_GATEWAY": "fail"},
                             restart_policy=RestartPolicy(max_crashes=2, first_delay=0.05), say=lambda _: None)
    with pytest.raises(CrashLoop) as caught:
        platform.start()  # the gateway never answers: start waits, restarting it, until it gives up
    assert caught.value.name == "gateway" and "boom: bad settings" in caught.value.report()
    assert platform.pids() == {}
