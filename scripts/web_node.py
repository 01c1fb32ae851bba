"""Node.js and npm for the web app in web/: the version check, its dependencies, npm commands.

Shared by scripts/build_web.py (make run), scripts/gen_web.py (make gen, make check-gen) and
scripts/test_members.py (make test's "web" step). Node.js 20 or newer is the web app's one
requirement beyond Python.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WEB = REPO / "web"
MIN_NODE_MAJOR = 20
INSTALL_NODE = "install Node.js 20 or newer (https://nodejs.org/en/download, or your system's nodejs 20+ package)"

Say = Callable[[str], None]


def node_version() -> tuple[int, int, int] | None:
    """The version of `node` on PATH, or None when there is none (or it does not run)."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"v(\d+)\.(\d+)\.(\d+)", out.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def node_problem() -> str | None:
    """Why the web app cannot be built or tested here (no Node.js, or one older than 20), or None."""
    version = node_version()
    if version is None:
        return "Node.js is not installed (no `node` on PATH)"
    if version[0] < MIN_NODE_MAJOR:
        return f"Node.js v{'.'.join(map(str, version))} is too old (the web app needs {MIN_NODE_MAJOR}+)"
    if shutil.which("npm") is None:
        return f"Node.js v{'.'.join(map(str, version))} has no npm on PATH"
    return None


def dependencies_current(web: Path = WEB) -> bool:
    """Whether web/node_modules was installed from the current package-lock.json: npm writes its
    own copy of the installed tree, node_modules/.package-lock.json, at every install, so a lock
    file changed since (a pull, a checkout) is newer than it."""
    installed = web / "node_modules" / ".package-lock.json"
    lock = web / "package-lock.json"
    return installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime


def npm(args: Sequence[str], web: Path = WEB, capture: bool = False) -> subprocess.CompletedProcess[str]:
    """`npm <args>` in web/ (its output goes to ours unless `capture`)."""
    npm_path = shutil.which("npm") or "npm"
    return subprocess.run([npm_path, *args], cwd=web, text=True, capture_output=capture)


def ensure_dependencies(say: Say, web: Path = WEB) -> bool:
    """Runs `npm ci` in web/ when node_modules is missing or older than package-lock.json;
    returns whether the dependencies are there afterwards."""
    if dependencies_current(web):
        return True
    why = "missing" if not (web / "node_modules").is_dir() else "older than package-lock.json"
    say(f"installing the web app's dependencies (npm ci: node_modules is {why}) ...")
    if npm(["ci", "--no-audit", "--no-fund"], web).returncode != 0:
        say("npm ci failed (its output is above)")
        return False
    return True
