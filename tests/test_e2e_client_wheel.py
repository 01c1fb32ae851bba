"""The agents guide's "Install the client", step by step, against the whole platform with an API
token: curl fetches the wheel the gateway serves, pip installs it into a fresh virtual
environment (its dependencies from PyPI), which then holds no grpc, OpenTelemetry or simplejpeg;
there a plain `platform_sdk.connect` session runs, and so does the guide's `my_agent.py` with the
guide's run command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from platform_testing.agents_guide import MY_AGENT
from platform_testing.platform import PlatformStack, clean_env, running_platform
from platform_testing.waiting import wait_for

TOKEN = "guide-token"
CURL = "/usr/bin/curl"
SERVER_SIDE = ("grpcio", "simplejpeg", "opentelemetry")  # a name, or a prefix of names (opentelemetry-*)
# The guide's step 1: the wheel "needs only numpy, gymnasium, httpx and protobuf" (and what they pull).
CLIENT_BASE = {"platform-sdk", "numpy", "gymnasium", "httpx", "protobuf"}

# The guide's step 1, as its reader types it (PLATFORM_URL and PLATFORM_TOKEN are set).
INSTALL = """
mkdir -p wheels
(cd wheels && curl -fsSOJ -H "Authorization: Bearer $PLATFORM_TOKEN" "$PLATFORM_URL/v0/wheels/platform-sdk")
pip install wheels/platform_sdk-*.whl
"""


RUN = ["-m", "platform_sdk.agents.run", "--agent", "my_agent:make", "--env", "cartpole", "--episodes", "20", "--record"]


@dataclass
class Client:
    """The reader's machine: a folder (`root`) holding wheels/ and the venv the wheel went into."""

    stack: PlatformStack
    root: Path
    venv: Path
    install: subprocess.CompletedProcess[str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self) -> dict[str, str]:
        """The reader's shell: the venv activated, the platform's address and token set."""
        env = {k: v for k, v in clean_env().items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        env.update({"VIRTUAL_ENV": str(self.venv), "PATH": f"{self.venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
                    "PLATFORM_URL": self.stack.url, "PLATFORM_TOKEN": TOKEN})
        return env

    def run(self, args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=timeout,
                              check=False)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env={"PLATFORM_API_TOKEN": TOKEN}) as stack:
        yield stack


@pytest.fixture(scope="module")
def client(stack: PlatformStack, tmp_path_factory: pytest.TempPathFactory) -> Client:
    if not os.access(CURL, os.X_OK) and shutil.which("curl") is None:
        pytest.fail(f"curl is missing ({CURL}): this test runs the guide's curl command; install curl "
                    "(apt-get install curl)")
    root = tmp_path_factory.mktemp("reader")
    venv = root / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert made.returncode == 0, f"python -m venv failed: {made.stderr}"
    client = Client(stack, root, venv, subprocess.CompletedProcess([], 0))
    client.install = client.run(["bash", "-euo", "pipefail", "-c", INSTALL], cwd=root, timeout=600)
    return client


def test_curl_keeps_the_wheels_name_and_pip_installs_it(client: Client) -> None:
    assert client.install.returncode == 0, f"{client.install.stdout}\n{client.install.stderr}"
    wheels = sorted(p.name for p in (client.root / "wheels").iterdir())
    disposition = httpx.get(f"{client.stack.url}/v0/wheels/platform-sdk", headers={"Authorization": f"Bearer {TOKEN}"},
                        timeout=60).headers["content-disposition"]
    assert len(wheels) == 1 and wheels[0].startswith("platform_sdk-") and wheels[0].endswith("-py3-none-any.whl")
    assert f'filename="{wheels[0]}"' in disposition


def test_the_wheel_needs_the_token(client: Client) -> None:
    refused = client.run(["bash", "-c", 'curl -fsS "$PLATFORM_URL/v0/wheels/platform-sdk"'], cwd=client.root)
    assert refused.returncode == 22, refused  # curl -f: the HTTP error
    assert "401" in refused.stderr


def test_the_venv_holds_only_the_client_dependencies(client: Client) -> None:
    assert client.install.returncode == 0, client.install.stderr
    listed = client.run([str(client.python), "-m", "pip", "list", "--format=json"], cwd=client.root)
    assert listed.returncode == 0, listed.stderr
    names = {p["name"].lower().replace("_", "-") for p in json.loads(listed.stdout)}
    assert CLIENT_BASE <= names
    assert not [n for n in names if n.startswith(SERVER_SIDE)], sorted(names)
    assert "websockets" not in names, sorted(names)  # the SDK's WebSocket client is its own
    assert "platform-contracts" not in names  # its code is inside the wheel


def test_gymnasium_ids_from_the_wheel(client: Client) -> None:
    """`platform_sdk.gym_ids` and its built-in table are in the wheel: `gym.make` and `gym.make_vec`
    by id, the platform and token from PLATFORM_URL and PLATFORM_TOKEN."""
    assert client.install.returncode == 0, client.install.stderr
    script = textwrap.dedent("""
        import json
        import gymnasium as gym
        import numpy as np
        import platform_sdk.gym_ids

        env = gym.make("simulusion/cartpole")
        env.reset(seed=0)
        single = env.step(0)[1]
        env.close()
        envs = gym.make_vec("simulusion/cartpole", 4)
        envs.reset(seed=0)
        rewards = envs.step(np.zeros(4, dtype=np.int64))[1]
        envs.close()
        print(json.dumps({"file": platform_sdk.gym_ids.__file__, "single": single, "vector": rewards.tolist(),
                          "spec": envs.spec.id}))
    """)
    folder = client.root / "by-id"
    folder.mkdir(exist_ok=True)
    done = client.run([str(client.python), "-c", script], cwd=folder)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(client.venv)), result
    assert result == {**result, "single": 1.0, "vector": [1.0] * 4, "spec": "simulusion/cartpole"}


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "gateway-websocket"])
def test_a_session_runs_from_the_wheel(client: Client, direct: bool) -> None:
    """Both step paths: the env host's step link, and the gateway's WebSocket (the SDK's own client)."""
    assert client.install.returncode == 0, client.install.stderr
    script = textwrap.dedent("""
        import json, sys
        import platform_sdk

        with platform_sdk.connect("cartpole", direct=sys.argv[1] == "1") as env:
            observation, info = env.reset(seed=0)
            steps, total = 0, 0.0
            for _ in range(30):
                observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
                steps, total = steps + 1, total + reward
                if terminated or truncated:
                    observation, info = env.reset()
            print(json.dumps({"file": platform_sdk.__file__, "steps": steps, "return": total,
                              "shape": list(observation.shape), "path": env.step_path,
                              "server_side": sorted({m.split(".")[0] for m in sys.modules}
                                                    & {"grpc", "opentelemetry", "simplejpeg", "websockets"})}))
    """)
    folder = client.root / "plain"
    folder.mkdir(exist_ok=True)
    done = client.run([str(client.python), "-c", script, "1" if direct else "0"], cwd=folder)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(client.venv)), result  # the wheel's, not the workspace's
    assert result["steps"] == 30 and result["return"] > 0 and result["shape"] == [4]
    assert result["server_side"] == []
    if not direct:
        assert result["path"] == "gateway", result


def test_the_guides_agent_runs_with_the_guides_command(client: Client) -> None:
    assert client.install.returncode == 0, client.install.stderr
    folder = client.root / "agent"
    folder.mkdir(exist_ok=True)
    (folder / "my_agent.py").write_text(MY_AGENT)
    done = client.run([str(client.python), *RUN], cwd=folder, timeout=300)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["episodes"] == 20
    recording_id = summary["recording_id"]
    assert recording_id
    http = httpx.Client(base_url=client.stack.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    # the recorder writes from the step stream on its own time: the recording is there once it has caught up
    meta = wait_for(lambda: (r := http.get(f"/v0/recordings/{recording_id}")).status_code == 200 and r.json(),
                    timeout=120, what=f"recording {recording_id} readable")
    assert meta["env_id"] == "cartpole"
