"""Ray RLlib trains on the platform: PPO for a few iterations, its env runner stepping CartPole by
the Gymnasium id `simulusion/cartpole` as one batched session (the id's vector entry point), and
its results recorded into a platform run by `platform_sdk.runs.rllib.run_callback`. It runs as a
user's machine would run it: in a virtual environment of Ray RLlib (which pins its own
Gymnasium) and the client wheel the gateway serves (platform_testing.training_venvs)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import clean_env
from platform_testing.training_venvs import RLLIB_REQUIREMENTS, served_wheel, training_venv
from platform_testing.waiting import wait_for

SCRIPT = Path(__file__).parent / "training" / "rllib_ppo.py"
# making .venvs/rllib (Ray and torch, once per clone) and starting Ray take minutes on a loaded CI machine
pytestmark = [pytest.mark.timeout(1200), pytest.mark.alone]  # alone: scripts/test_members.py ALONE_MARK


@pytest.fixture(scope="module")
def rllib_python(platform_stack, tmp_path_factory) -> Path:
    wheel = served_wheel(platform_stack.url, tmp_path_factory.mktemp("wheel"))
    return training_venv("rllib", RLLIB_REQUIREMENTS, wheel)


def test_ppo_records_a_run_from_one_batched_session(platform_stack, rllib_python, tmp_path):
    ray_tmp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's sockets need a short path
    # RAY_ENABLE_UV_RUN_RUNTIME_ENV=0: make test runs under `uv run`, and Ray, finding `uv run`
    # among its driver's ancestors, would start its workers with that command (the workspace's
    # environment, without Ray) instead of this venv's Python: "worker startup repeatedly failed"
    env = {**clean_env(), "PLATFORM_URL": platform_stack.url, "RAY_AUTH_MODE": "disabled",
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_TMPDIR": str(ray_tmp), "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    # its own process group: Ray's processes go with it even when it has to be killed
    trainer = subprocess.Popen([str(rllib_python), str(SCRIPT), "ppo-cartpole", "3", "1", "4"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path, start_new_session=True)
    try:
        out, err = trainer.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(trainer.pid, signal.SIGKILL)
        out, err = trainer.communicate()
        pytest.fail(f"the PPO script ran past 600 s; its output:\n{out[-2000:]}\n{err[-4000:]}")
    finally:
        if trainer.poll() is None:
            os.killpg(trainer.pid, signal.SIGKILL)
            trainer.wait()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert trainer.returncode == 0, err[-4000:]
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [line["iteration"] for line in lines] == [1, 2, 3]
    assert lines[-1]["env_steps"] >= 3 * 512 and lines[-1]["episode_return_mean"] > 0

    http = httpx.Client(base_url=platform_stack.url, timeout=30)
    run = wait_for(lambda: next((r for r in http.get("/v0/runs", params={"tag": "rllib"}).json()["data"]
                                 if r["name"] == "ppo-cartpole" and r["state"] == "finished"), None),
                   timeout=60, what="the RLlib run finished")
    assert run["hparams"]["algorithm"] == "PPO" and run["hparams"]["num_envs_per_env_runner"] == 4
    # one batched session: the env runner's, of 4 sub-environments (the driver samples none)
    assert len(run["session_ids"]) == 1
    session = http.get(f"/v0/sessions/{run['session_ids'][0]}").json()
    assert session["env_id"] == "cartpole" and session["num_envs"] == 4
    summary = run["summary"]
    assert (summary["roles/env_runners/count"], summary["roles/env_runners/healthy"]) == (1, 1)
    assert summary["roles/learners/count"] == 1 and summary["roles/env_runners/nodes"]
    series = http.get(f"/v0/runs/{run['id']}/metrics",
                      params={"names": "env_runners/episode_return_mean"}).json()["series"]
    curve = series["env_runners/episode_return_mean"]
    assert curve["step"] == [1, 2, 3]
    assert curve["frames"] == sorted(curve["frames"]) and curve["frames"][-1] == lines[-1]["env_steps"]
    assert curve["value"] == pytest.approx([line["episode_return_mean"] for line in lines])
