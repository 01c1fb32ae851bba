"""What tests of evals share (tests/test_e2e_evals.py, tests/test_e2e_evals_platform_task.py,
tests/web/test_evals_pages.py): model API packages registered through Inspect's `inspect_ai`
entry point (installed on the machine through the eval's `packages`: `scripted`, and
`scripted_agent` for platform_sdk/episodes), and a real sshd (platform_testing.sshd) set up as an eval's
machine: uv on its PATH with this host's uv cache, offline, and a `docker` whose `info` fails
(a machine without a Docker its user may run: sandboxed tasks are refused)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

from platform_testing.sshd import SshServer

TASK = "inspect_evals/agent_threat_bench_autonomy_hijack"  # its data ships in the package; rule-based scorer
PINS = ("inspect-ai==0.3.285", "inspect-evals==0.26.0")

MODEL_PACKAGE = {
    "pyproject.toml": """[project]
name = "simtest-models"
version = "0.1.0"
requires-python = ">=3.10"
[project.entry-points.inspect_ai]
simtest_models = "simtest_models._registry"
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[tool.hatch.build.targets.wheel]
packages = ["simtest_models"]
""",
    "simtest_models/__init__.py": "",
    "simtest_models/_registry.py": '''import asyncio
import os

from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi


@modelapi(name="scripted")
def scripted():
    class Scripted(ModelAPI):
        """Answers a fixed text, with token usage; says whether SIMTEST_SECRET reached its process
        (its length, never its value); waits `sleep` seconds first (`first_sleep` for its first
        answer)."""

        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)
            self.sleep = float(model_args.get("sleep", 0))
            self.first_sleep = float(model_args.get("first_sleep", self.sleep))
            self.calls = 0

        async def generate(self, input, tools, tool_choice, config):
            self.calls += 1
            await asyncio.sleep(self.first_sleep if self.calls == 1 else self.sleep)
            said = f"I will not do that. secret length {len(os.environ.get('SIMTEST_SECRET', ''))}"
            output = ModelOutput.from_content(model=self.model_name, content=said)
            output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            return output

    return Scripted
''',
}


def write_model_package(root: Path) -> Path:
    """The model package (`--model scripted/<anything>`, `-M sleep=<s>`, `-M first_sleep=<s>`) written at `root`."""
    for name, text in MODEL_PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def write_agent_package(root: Path) -> Path:
    """A package `simtest-agent` at `root` registering platform_testing.inspect_models' model API
    `scripted_agent` (`--model scripted_agent/balance`: CartPole's `act` calls), its very source,
    for a machine's eval environment, which has no platform-testing."""
    pyproject = MODEL_PACKAGE["pyproject.toml"].replace("simtest-models", "simtest-agent").replace(
        "simtest_models", "simtest_agent")
    texts = {"pyproject.toml": pyproject, "simtest_agent/__init__.py": "",
             "simtest_agent/_registry.py": (files("platform_testing") / "inspect_models.py").read_text()}
    for name, text in texts.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@contextmanager
def eval_machine(root: Path, scratch: Path, warm: Sequence[str] = ()) -> Iterator[SshServer]:
    """A started sshd at `root` set up as an eval's machine (see the module); the pinned packages
    (and hatchling, which builds the model package, and the requirements `warm`) put in this
    host's uv cache first, through a virtual environment in `scratch`, so the machine's offline
    install finds them all."""
    with SshServer(root) as server:
        uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
        (server.bin / "uv").symlink_to(uv)
        cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
        (server.home / ".cache").mkdir()
        (server.home / ".cache" / "uv").symlink_to(cache)
        (server.home / ".config" / "uv").mkdir(parents=True)
        (server.home / ".config" / "uv" / "uv.toml").write_text("offline = true\n")  # the machine's own uv setting
        python = shutil.which("python3", path=f"{server.bin}:/usr/local/bin:/usr/bin:/bin") or "python3"
        subprocess.run([uv, "venv", "--quiet", "--python", python, str(scratch / "venv")], check=True)
        subprocess.run([uv, "pip", "install", "--quiet", "--python", str(scratch / "venv" / "bin" / "python"),
                        *PINS, "hatchling", *warm], check=True)
        docker = server.bin / "docker"
        docker.write_text("#!/bin/sh\necho 'permission denied while trying to connect to the Docker daemon' >&2\n"
                          "exit 1\n")
        docker.chmod(0o755)
        yield server
