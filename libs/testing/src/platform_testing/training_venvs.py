"""Virtual environments for training libraries that cannot share the workspace's: Ray RLlib pins
its own Gymnasium, and it and Stable-Baselines3 bring torch. Each is what a user's machine would
hold: the pinned libraries and the platform's client wheel as the gateway serves it
(`GET /v0/wheels/platform-sdk`), made with uv under `<repo>/.venvs/<name>` and kept while its
requirements and the wheel stay the same (a stamp file; a file lock for parallel workers)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shlex
import shutil
import site
import subprocess
from collections.abc import Sequence
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[4]
RLLIB_REQUIREMENTS = ("ray[rllib]==2.60.0", "torch==2.15.0")  # RLlib 2.60 pins gymnasium 1.2.2


def uv_command() -> list[str]:
    """uv as the Makefile gives it (`$UV`), on PATH, or in the user's base.

    Raises:
        RuntimeError: naming uv, when none is found.
    """
    if os.environ.get("UV"):
        return shlex.split(os.environ["UV"])
    found = shutil.which("uv") or str(Path(site.getuserbase()) / "bin" / "uv")
    if not Path(found).is_file():
        raise RuntimeError("uv is needed to make the training libraries' environment: install it (make setup does)")
    return [found]


def served_wheel(url: str, folder: Path) -> Path:
    """The platform's client wheel, fetched from `url` as a machine fetches it."""
    response = httpx.get(f"{url}/v0/wheels/platform-sdk", timeout=120)
    response.raise_for_status()
    disposition = response.headers.get("content-disposition", "")
    name = disposition.split("filename=")[-1].strip('"') if "filename=" in disposition else \
        "platform_sdk-0.1.0-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / name
    wheel.write_bytes(response.content)
    return wheel


def training_venv(name: str, requirements: Sequence[str], wheel: Path) -> Path:
    """The Python of `.venvs/<name>` holding `requirements` and `wheel`, made or refreshed."""
    root = REPO / ".venvs" / name
    stamp_value = hashlib.sha256("\n".join([*requirements, hashlib.sha256(wheel.read_bytes()).hexdigest()])
                                 .encode()).hexdigest()
    python = root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = root / ".platform-stamp"
        if python.exists() and stamp.exists() and stamp.read_text() == stamp_value:
            return python
        uv = uv_command()
        for step in ([*uv, "venv", "-q", "--allow-existing", "-p", "3.11", str(root)],
                     [*uv, "pip", "install", "-q", "-p", str(python), "--reinstall-package", "platform-sdk", *requirements,
                      str(wheel)]):
            done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=1800)
            if done.returncode != 0:
                raise RuntimeError(f"making .venvs/{name} failed ({shlex.join(step)}): {done.stderr[-2000:]}")
        stamp.write_text(stamp_value)
    return python
