"""The real platform: `python -m platform_local` and PlatformStack with the real services (here
among the cross-service tests: libs/local's own environment holds none of the services)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from platform_local.local_platform import free_port
from platform_local.procs import descendants, pid_alive
from platform_testing.platform import PlatformStack, clean_env, running_platform

BANNER = "Simulusion is running at"


def get_envs(url: str) -> object:
    with urllib.request.urlopen(f"{url}/v0/envs", timeout=10) as response:
        assert response.status == 200
        return json.loads(response.read())


def test_local_full_start_answers_and_ctrl_c_leaves_no_process(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env() | {"PLATFORM_PORT": str(port), "PLATFORM_DATA_DIR": str(tmp_path / "data"),
                         "PLATFORM_RECORDINGS": str(tmp_path / "recordings"),
                         # the launcher's warm pools and previews ahead: tests/web/test_first_frame.py's
                         "PLATFORM_POOLS": "", "PLATFORM_WARM_PREVIEWS": ""}
    process = subprocess.Popen([sys.executable, "-m", "platform_local"], env=env, cwd=tmp_path,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        output: list[str] = []

        def read() -> None:
            assert process.stdout is not None
            while line := process.stdout.readline():
                output.append(line)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + 90
        while not any(BANNER in line for line in list(output)):
            assert time.monotonic() < deadline and process.poll() is None, "".join(output)
            time.sleep(0.1)
        assert get_envs(f"http://127.0.0.1:{port}") is not None
        before = descendants(process.pid)
        create = urllib.request.Request(f"http://127.0.0.1:{port}/v0/sessions", method="POST",
                                        data=json.dumps({"env_id": "cartpole"}).encode(),
                                        headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(create, timeout=60) as response:
            assert response.status == 201
        children = descendants(process.pid)
        assert len(children) > len(before) >= 5, (before, children)  # + the environment instance
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 0
        deadline = time.monotonic() + 5
        while (left := [pid for pid in children if pid_alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_local_full_stack_restarts_services(tmp_path: Path) -> None:
    with running_platform(tmp_path) as stack:
        assert isinstance(stack, PlatformStack)
        envs = get_envs(stack.url)
        gateway = stack.pid("gateway")
        stack.restart("gateway")  # same port again; the broker is slower to restart (reconciliation)
        assert stack.pid("gateway") not in (None, gateway)
        assert get_envs(stack.url) == envs
        assert stack.kill("envhost", signal.SIGKILL) == -signal.SIGKILL
        stack.start_service("envhost")
        stack.check()
        assert stack.recordings == tmp_path / "recordings"
        assert (stack.data_dir / "nats" / "jetstream").is_dir()
