"""A folder of the platform's host as an experiment's source: which folders may be read, and
which of their files go.

Reading the host's folders is the operator's choice: only under the roots of
PLATFORM_EXPERIMENTS_UPLOAD_ROOTS (colon-separated; unset, the default: no folder is read). The
folder is resolved first (`..` and symbolic links followed), and the folder it resolves to must
be under a resolved root. Inside it, symbolic links are packed as links (their target's content
is never read), so a link cannot bring in a file from outside.

Files: in a git work tree, what `git ls-files -co --exclude-standard` lists (tracked files and
untracked ones not ignored: .gitignore is honoured); otherwise every file. `.git` never goes.
Their size (regular files, uncompressed) is limited by PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from platform_machines.errors import InvalidExperimentError

ROOTS_SETTING = "PLATFORM_EXPERIMENTS_UPLOAD_ROOTS"
MAX_SETTING = "PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB"
GIT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class FolderSource:
    """A folder checked and listed: `files` relative to `folder` (directories and links included)."""

    folder: Path  # resolved
    files: tuple[str, ...]
    total_bytes: int  # the regular files' sizes
    git: bool  # listed by git (.gitignore honoured)
    max_bytes: int  # the limit, held again while packing (a file may grow meanwhile)


@dataclass(frozen=True)
class UploadPolicy:
    roots: tuple[Path, ...] = ()  # resolved; none: uploads are off
    max_bytes: int = 500 * 1024 * 1024

    @classmethod
    def from_settings(cls, roots: str, max_mb: float) -> UploadPolicy:
        """Raises ValueError for a root that is not an absolute path."""
        found = []
        for root in (r.strip() for r in roots.split(":")):
            if not root:
                continue
            if not os.path.isabs(root):
                raise ValueError(f"{ROOTS_SETTING}: {root!r} is not an absolute path")
            found.append(Path(root).resolve())
        return cls(tuple(found), int(max_mb * 1024 * 1024))

    def prepare(self, folder: str) -> FolderSource:
        """The folder checked against the roots and the size limit, and its files listed.

        Raises:
            InvalidExperimentError: (field "folder") uploads are off, the path is not absolute,
                missing, not a folder, unreadable, outside the roots, or too large; each says what
                to do.
        """
        if not self.roots:
            raise _invalid(f"uploading a folder of the platform's host is off: the operator allows it by setting "
                           f"{ROOTS_SETTING} to the folders (colon-separated) whose subfolders may be uploaded; "
                           "or give repository, a git URL the machine can clone")
        if not os.path.isabs(folder):
            raise _invalid(f"folder {folder!r} is not an absolute path: give the folder's full path on the "
                           "platform's host")
        try:
            resolved = Path(folder).resolve(strict=True)
        except FileNotFoundError:
            raise _invalid(f"folder {folder!r} does not exist on the platform's host") from None
        except (OSError, RuntimeError) as exc:
            raise _invalid(f"folder {folder!r} cannot be read: {exc}") from None
        if not any(resolved.is_relative_to(root) for root in self.roots):
            via = "" if str(resolved) == os.path.normpath(folder) else f" (it resolves to {resolved})"
            raise _invalid(f"folder {folder!r}{via} is outside the folders that may be uploaded "
                           f"({':'.join(map(str, self.roots))}, {ROOTS_SETTING}): give a folder under one of them")
        if not resolved.is_dir():
            raise _invalid(f"{folder!r} is not a folder: give the folder holding the code")
        try:
            git = _in_git_work_tree(resolved)
            files = _git_files(resolved) if git else _all_files(resolved)
            total = sum(size for size in (_size(resolved / f) for f in files))
        except OSError as exc:
            raise _invalid(f"folder {folder!r} cannot be read: {exc}") from None
        if total > self.max_bytes:
            raise _invalid(f"folder {folder!r} holds {size_text(total)} to upload, more than the {size_text(self.max_bytes)} "
                           f"allowed ({MAX_SETTING}): leave out data and outputs (a .gitignore in a git work tree "
                           "is honoured), or use a git URL")
        return FolderSource(resolved, files, total, git, self.max_bytes)


def _invalid(message: str) -> InvalidExperimentError:
    return InvalidExperimentError(message, field="folder")


def size_text(n: int) -> str:
    """Bytes as people read them: `12.3 KB`, `45.6 MB`."""
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


def _size(path: Path) -> int:
    try:
        info = path.lstat()
    except FileNotFoundError:  # listed by git, deleted in the work tree
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _in_git_work_tree(folder: Path) -> bool:
    if shutil.which("git") is None:
        return False
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--is-inside-work-tree"], capture_output=True,
                          text=True, timeout=GIT_TIMEOUT_S, check=False)
    return done.returncode == 0 and done.stdout.strip() == "true"


def _git_files(folder: Path) -> tuple[str, ...]:
    done = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "-co", "--exclude-standard"],
                          capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise OSError(f"git ls-files failed: {done.stderr.decode(errors='replace').strip()}")
    files: list[str] = []
    for name in sorted(set(os.fsdecode(n) for n in done.stdout.split(b"\0") if n)):
        path = folder / name
        if ".git" in Path(name).parts or not os.path.lexists(path):
            continue
        if path.is_dir() and not path.is_symlink():  # a submodule: its files, less its .git
            files.extend(f"{name}/{inner}" for inner in _all_files(path))
        else:
            files.append(name)
    return tuple(files)


def _all_files(folder: Path) -> tuple[str, ...]:
    """Every file, folder and link under `folder` (relative), `.git` left out, links not followed."""
    files: list[str] = []
    for top, dirs, names in os.walk(folder, onerror=_raise):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        relative = os.path.relpath(top, folder)
        prefix = "" if relative == "." else relative + "/"
        files.extend(prefix + d for d in dirs)  # a link to a folder is packed as the link, not walked
        files.extend(prefix + n for n in sorted(names) if n != ".git")
    return tuple(files)


def _raise(exc: OSError) -> None:
    raise exc
