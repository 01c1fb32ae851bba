"""Which folders of the platform's host may be uploaded and which of their files go
(platform_machines.folder_source), on real folders and a real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from platform_machines.errors import InvalidExperimentError
from platform_machines.folder_source import UploadPolicy


def refused(policy: UploadPolicy, folder: str) -> str:
    with pytest.raises(InvalidExperimentError) as caught:
        policy.prepare(folder)
    assert caught.value.field == "folder"
    return str(caught.value)


def test_a_plain_folder_whole_less_git_with_links_as_links(tmp_path: Path) -> None:
    root = tmp_path / "root"
    code = root / "code"
    (code / "sub" / ".git").mkdir(parents=True)
    (code / "sub" / "a.py").write_text("a = 1\n")
    (code / ".git").mkdir()
    (code / ".git" / "config").write_text("not a repository\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "big").write_bytes(b"x" * 10_000)
    (code / "linked-folder").symlink_to(tmp_path / "elsewhere")
    (code / "linked-file").symlink_to(tmp_path / "elsewhere" / "big")
    source = UploadPolicy.from_settings(str(root), 1).prepare(str(code))
    assert source.files == ("linked-folder", "sub", "linked-file", "sub/a.py")
    assert source.total_bytes == len("a = 1\n") and not source.git  # a link's target is never counted or read


def test_a_git_work_tree_honours_gitignore_from_a_subfolder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "train" / "runs").mkdir(parents=True)
    (repo / ".gitignore").write_text("runs/\n")
    (repo / "train" / "main.py").write_text("print(1)\n")
    (repo / "train" / "runs" / "out.bin").write_bytes(b"y" * 5000)
    (repo / "train" / "new.py").write_text("untracked\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", ".gitignore", "train/main.py"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "c"], check=True)
    (repo / "train" / "main.py").unlink()  # tracked, deleted in the work tree: not packed
    source = UploadPolicy.from_settings(str(tmp_path), 1).prepare(str(repo / "train"))
    assert source.git and source.files == ("new.py",)


def test_refusals(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "escape").symlink_to(tmp_path / "outside")
    policy = UploadPolicy.from_settings(f"{root}:", 0.001)
    assert "is off" in refused(UploadPolicy(), str(root / "inside"))
    assert f"resolves to {tmp_path / 'outside'}" in refused(policy, str(root / "escape"))
    assert "is outside" in refused(policy, str(root / "inside" / ".." / ".." / "outside"))
    assert "does not exist" in refused(policy, str(root / "nothing"))
    assert "not an absolute path" in refused(policy, "inside")
    (root / "inside" / "w.bin").write_bytes(os.urandom(2000))
    assert "PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB" in refused(policy, str(root / "inside"))
    with pytest.raises(ValueError, match="PLATFORM_EXPERIMENTS_UPLOAD_ROOTS"):
        UploadPolicy.from_settings("relative/root", 1)
