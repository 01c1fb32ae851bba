"""The packages' dependency trees follow their roles: the control plane's tree holds no simulator
(docs/architecture.md, "Packages by role"), read from uv's own view of the workspace's lock."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SIMULATORS = ("mujoco", "ale-py", "vizdoom", "dm-control", "mujoco-menagerie")


def uv_tree(package: str) -> list[str]:
    """The package names in `uv tree --package <package>` (dev groups shown, as uv shows them)."""
    command = shlex.split(os.environ.get("UV") or "") or ([shutil.which("uv")] if shutil.which("uv") else [])
    if not command:
        pytest.fail("uv is needed to read the workspace's dependency tree: set $UV or put uv on PATH")
    done = subprocess.run(
        [*command, "tree", "--frozen", "--package", package], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    names = []
    for line in done.stdout.splitlines():
        words = line.lstrip("│├└─ ").split()
        if words:
            names.append(words[0].split("[")[0])
    return names


@pytest.mark.parametrize("package", ["platform-gateway", "platform-broker", "platform-recorder"])
def test_the_control_plane_tree_holds_no_simulator(package: str) -> None:
    names = uv_tree(package)
    assert names[0] == package
    assert not [name for name in names if name in SIMULATORS]


def test_the_environments_tree_holds_every_simulator() -> None:
    """The check above reads the tree the way it is written: it does find simulators where they are."""
    names = set(uv_tree("platform-envs"))
    assert set(SIMULATORS) <= names
