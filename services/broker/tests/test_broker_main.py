"""`python -m platform_broker` as a real process: start-up failures and a clean run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nats.errors
from platform_contracts import subjects
from platform_testing.ports import free_port
from simulusion.control.v1 import control_pb2


def broker_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
    env["PLATFORM_DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path}/data/platform.db"
    env.update({f"PLATFORM_{key.upper()}": value for key, value in settings.items()})
    return env


def run_to_exit(tmp_path: Path, timeout: float = 40.0, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "platform_broker"], env=broker_env(tmp_path, **settings),
                          cwd=tmp_path, capture_output=True, text=True, timeout=timeout, check=False)


def test_unreachable_nats_exits_with_one_line(tmp_path):
    started = time.monotonic()
    result = run_to_exit(tmp_path, nats_url=f"nats://127.0.0.1:{free_port()}")
    assert result.returncode != 0
    assert time.monotonic() - started < 30  # a 5 s connect deadline, plus imports on a busy machine
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "cannot connect to NATS at nats://127.0.0.1:" in lines[0]
    assert "Traceback" not in result.stderr


def test_bad_catalog_exits_with_one_line_naming_file_and_entry(tmp_path):
    catalog = tmp_path / "catalog.toml"
    catalog.write_text('[envs.broken]\nfactory = "not a factory"\n')
    result = run_to_exit(tmp_path, nats_url=f"nats://127.0.0.1:{free_port()}")  # ./catalog.toml by default
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(catalog) in lines[0] or "catalog.toml" in lines[0]
    assert "entry 'broken'" in lines[0]


def test_unreachable_database_exits_with_one_line(tmp_path, broker_nats):
    url = f"postgresql://postgres:hunter2@127.0.0.1:{free_port()}/platform"
    result = run_to_exit(tmp_path, nats_url=broker_nats.url, database_url=url)
    assert result.returncode != 0
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1, result.stderr
    assert "cannot open the database postgresql+asyncpg://postgres:***@127.0.0.1:" in errors[0]
    assert "hunter2" not in result.stderr and "Traceback" not in result.stderr


def test_bad_setting_exits_with_one_line(tmp_path):
    result = run_to_exit(tmp_path, idle_timeout="soon")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "PLATFORM_IDLE_TIMEOUT" in lines[0], result.stderr


async def test_serves_the_catalog_and_stops_on_sigterm(tmp_path, broker_nats):
    catalog = tmp_path / "my.toml"
    catalog.write_text('[envs.lunar]\ngymnasium_id = "LunarLander-v3"\nkwargs = { continuous = true }\n')
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "platform_broker", cwd=tmp_path, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env=broker_env(tmp_path, nats_url=broker_nats.url, catalog=str(catalog)))
    nc = await nats.connect(broker_nats.url)
    try:
        reply = None
        deadline = time.monotonic() + 30
        while reply is None and time.monotonic() < deadline and proc.returncode is None:
            try:
                msg = await nc.request(subjects.BROKER_LIST_ENVS, control_pb2.ListEnvsRequest().SerializeToString(),
                                       timeout=1)
                reply = control_pb2.ListEnvsReply.FromString(msg.data)
            except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
                await asyncio.sleep(0.2)
        assert reply is not None, f"the broker never answered; exit {proc.returncode}"
        ids = [entry.id for entry in reply.envs]
        assert ids[0] == "cartpole" and ids[-1] == "lunar"
        assert (tmp_path / "data" / "platform.db").is_file()
    finally:
        await nc.drain()
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, stderr_bytes = await asyncio.wait_for(proc.communicate(), 15)
        except TimeoutError:
            proc.kill()
            _, stderr_bytes = await proc.communicate()
    stderr = stderr_bytes.decode()
    assert proc.returncode == 0, stderr
    assert "broker serving" in stderr and "Traceback" not in stderr
