"""Session lifecycle across services: idle timeout, restarts, NATS outage, no orphans, no ghosts."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
from platform_testing.platform import running_platform
from platform_testing.waiting import instance_pids, wait_for


def session_state(url: str, sid: str) -> dict:
    return httpx.get(f"{url}/v0/sessions/{sid}", timeout=10).json()


def test_idle_sessions_stop_and_free_their_process(tmp_path):
    with running_platform(tmp_path, extra_env={"PLATFORM_IDLE_TIMEOUT": "3"}) as stack:
        env = platform_sdk.connect("cartpole", url=stack.url)
        env.reset(seed=0)
        sid = env.session_id
        assert instance_pids(sid)
        state = wait_for(
            lambda: (s := session_state(stack.url, sid))["state"] in ("closed", "CLOSED") and s,
            timeout=30,
            what="the idle session to close",
        )
        assert "idle" in state["reason"]
        wait_for(lambda: not instance_pids(sid), timeout=10, what="the idle session's process to exit")
        try:
            env.step(0)
            raise AssertionError("a step on an idle-stopped session must fail")
        except platform_sdk.PlatformError as exc:
            assert sid in str(exc)
        env.close()


def test_an_env_host_and_broker_restart_leave_no_ghost_session(tmp_path):
    with running_platform(tmp_path) as stack:
        env = platform_sdk.connect("cartpole", url=stack.url)
        sid = env.session_id
        env.reset(seed=0)
        stack.kill("envhost", signal.SIGKILL)
        wait_for(lambda: not instance_pids(sid), timeout=10, what="instances to die with their env host")
        stack.start_service("envhost")
        stack.restart("broker")
        state = wait_for(
            lambda: (s := session_state(stack.url, sid))["state"].lower() in ("closed", "crashed") and s,
            timeout=30,
            what="the ghost session to be closed",
        )
        assert state["state"].lower() in ("closed", "crashed")
        running = httpx.get(f"{stack.url}/v0/sessions").json()["data"]
        assert sid not in [s["id"] for s in running]
        env.close()
        with platform_sdk.connect("cartpole", url=stack.url) as fresh:  # the platform still works
            fresh.reset(seed=0)
            fresh.step(1)


def test_a_broker_that_lost_its_table_stops_orphan_instances(tmp_path):
    with running_platform(tmp_path) as stack:
        env = platform_sdk.connect("cartpole", url=stack.url)
        sid = env.session_id
        assert instance_pids(sid)
        stack.kill("broker", signal.SIGKILL)
        for db in Path(stack.data_dir).glob("platform.db*"):
            db.unlink()
        stack.start_service("broker")
        wait_for(lambda: not instance_pids(sid), timeout=30, what="the orphan instance to be stopped")
        env.close()


def test_a_nats_restart_loses_no_recorded_step(tmp_path):
    with running_platform(tmp_path) as stack:
        with platform_sdk.connect("pendulum", url=stack.url, record=True) as env:
            sid = env.session_id
            env.reset(seed=0)
            for _ in range(100):
                env.step(np.array([0.1], dtype=np.float32))
            stack.restart("nats", signal.SIGKILL)
            for _ in range(99):  # steps keep flowing while NATS is back; the episode ends at 200
                env.step(np.array([0.1], dtype=np.float32))
            *_, truncated, _ = env.step(np.array([0.1], dtype=np.float32))
            assert truncated
        meta_path = Path(stack.recordings) / sid / "meta.json"

        def finished():
            if not meta_path.exists():
                return None
            meta = json.loads(meta_path.read_text())
            return meta if meta["episodes"] and meta["episodes"][0]["length"] == 200 else None

        meta = wait_for(finished, timeout=60, what="the 200-step episode to be written")
        data = np.load(Path(stack.recordings) / sid / meta["episodes"][0]["file"])
        assert data["seq"].tolist() == list(range(2, 202)), "every step exactly once, in order"
        assert len(data["rewards"]) == 200
