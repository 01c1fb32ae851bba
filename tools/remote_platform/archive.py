"""The platform's source as a .tar.gz to upload: in a git checkout, what `git ls-files` lists
(tracked files and untracked ones git does not ignore, as they are in the working tree);
elsewhere the working tree less the build outputs and caches that .gitignore names (.venv,
node_modules, web/dist, test-output, ...). With it, `.gpu_server/version.json`: the commit (or
"not a git checkout"), whether the tree had changes, when and from where it was deployed."""

from __future__ import annotations

import fnmatch
import io
import json
import os
import socket
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

STATE_DIR = ".gpu_server"  # the tool's own files in the deployed folder
VERSION_FILE = f"{STATE_DIR}/version.json"

# Never shipped, whatever .gitignore says: environments, dependencies, build outputs, caches.
_ALWAYS_LEFT_OUT = {".git", ".venv", ".venvs", "node_modules", "test-output", "__pycache__", ".pytest_cache",
                    ".ruff_cache", ".mypy_cache", STATE_DIR}
_ALWAYS_LEFT_OUT_PATHS = {"web/dist", "data", "recordings"}


@dataclass(frozen=True)
class SourceArchive:
    path: Path
    file_count: int
    size: int  # bytes of the compressed archive
    version: dict[str, str]


def pack_source(repo: Path, into: Path) -> SourceArchive:
    """Writes the archive of `repo` to `into`."""
    files = source_files(repo)
    version = source_version(repo)
    with tarfile.open(into, "w:gz", compresslevel=6) as tar:
        for relative in files:
            tar.add(repo / relative, arcname=relative, recursive=False)
        data = (json.dumps(version, indent=2) + "\n").encode()
        info = tarfile.TarInfo(VERSION_FILE)
        info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
        tar.addfile(info, io.BytesIO(data))
    return SourceArchive(path=into, file_count=len(files), size=into.stat().st_size, version=version)


def source_files(repo: Path) -> list[str]:
    """The files to ship, relative to `repo`, sorted."""
    listed = _git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None:
        names = _walk_without_ignored(repo)
    else:
        names = [name for name in listed.split("\0") if name]
    kept = []
    for name in names:
        path = repo / name
        if _left_out(name) or not (path.is_file() or path.is_symlink()) or not path.exists():
            continue  # deleted but still tracked, or a build output
        kept.append(name)
    return sorted(set(kept))


def source_version(repo: Path) -> dict[str, str]:
    """What status shows as the deployed version."""
    commit = _git(repo, "rev-parse", "HEAD")
    changes = _git(repo, "status", "--porcelain", "--untracked-files=no")
    version = {
        "commit": commit.strip() if commit else "not a git checkout",
        "deployed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "deployed_from": socket.gethostname(),
    }
    if commit:
        subject = _git(repo, "log", "-1", "--format=%s")
        version["subject"] = (subject or "").strip()
        version["changes"] = "uncommitted changes" if changes and changes.strip() else "none"
    return version


def _git(repo: Path, *args: str) -> str | None:
    """git's output, or None where `repo` is not a git checkout (or git is missing)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _left_out(name: str) -> bool:
    parts = name.split("/")
    if any(part in _ALWAYS_LEFT_OUT or part.endswith((".pyc", ".egg-info")) for part in parts):
        return True
    return any(name == path or name.startswith(path + "/") for path in _ALWAYS_LEFT_OUT_PATHS)


def _walk_without_ignored(repo: Path) -> list[str]:
    """The working tree less what the root .gitignore's patterns match (`name`, `/anchored`,
    `dir/`, globs; negations are not read)."""
    patterns = _gitignore_patterns(repo)
    names = []
    for folder, dirs, files in os.walk(repo):
        relative_folder = os.path.relpath(folder, repo)
        prefix = "" if relative_folder == "." else relative_folder.replace(os.sep, "/") + "/"
        dirs[:] = [d for d in dirs if not _ignored(prefix + d, True, patterns) and not _left_out(prefix + d)]
        names += [prefix + f for f in files if not _ignored(prefix + f, False, patterns)]
    return names


def _gitignore_patterns(repo: Path) -> list[str]:
    try:
        lines = (repo / ".gitignore").read_text().splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored(name: str, is_dir: bool, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/"):
            if not is_dir:
                continue
            pattern = pattern.rstrip("/")
        if pattern.startswith("/") or "/" in pattern:
            if fnmatch.fnmatchcase(name, pattern.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], pattern):
            return True
    return False
