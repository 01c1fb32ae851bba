"""An experiment whose code is a folder of the platform's host, uploaded as an archive, through
the gateway on the real platform's processes and a real sshd (platform_testing.sshd): the folder
(a git work tree with a .gitignore, a subfolder, a link) goes into the run folder's checkout/,
the command sees its files, the upload's lines lead the log; and what is refused, each a 422
saying what to fix: uploads off, a folder outside PLATFORM_EXPERIMENTS_UPLOAD_ROOTS, a missing
one, one too large, a link escaping the root, a relative path, both repository and folder."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.experiments import add_machine, wait_ended, whole_log
from platform_testing.sshd import SshServer

MAX_MB = 0.05  # about 52 KB: the large folder is over it


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("uploads")


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, roots: Path) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5",
             "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2", "PLATFORM_EXPERIMENTS_UPLOAD_ROOTS": f"{roots}:/nonexistent",
             "PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB": str(MAX_MB)}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url + "/v0", timeout=120) as client:
        yield client


@pytest.fixture
def machine(api: httpx.Client, sshd: SshServer) -> str:
    return str(add_machine(api, sshd)["id"])


def git(*args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    *args], check=True, capture_output=True)


def test_a_folder_uploaded_as_the_checkout(api: httpx.Client, machine: str, roots: Path, tmp_path: Path) -> None:
    code = roots / "train"
    (code / "pkg").mkdir(parents=True)
    (code / "train.py").write_text("print('training')\n")
    (code / "pkg" / "data.txt").write_text("numbers 1 2 3\n")
    (code / ".gitignore").write_text("outputs/\n*.ckpt\n")
    (code / "outputs").mkdir()
    (code / "outputs" / "big.bin").write_bytes(b"x" * 200_000)  # ignored: over the limit if it went
    (code / "model.ckpt").write_text("ignored\n")
    (code / "notes.txt").write_text("untracked, not ignored\n")
    os.symlink("pkg/data.txt", code / "data-link")
    git("init", "-q", str(code))
    git("-C", str(code), "add", "train.py", "pkg", ".gitignore", "data-link")
    git("-C", str(code), "commit", "-q", "-m", "code")

    command = "python3 train.py; cat pkg/data.txt; cat data-link; sleep 2; exit 4"
    made = api.post("/experiments", json={"machine": machine, "folder": str(code), "command": command})
    assert made.status_code == 201, made.text
    x = made.json()
    assert x["folder"] == str(code) and x["repository"] == "" and x["status"] == "running"
    done = wait_ended(api, x["id"])
    assert done["status"] == "failed" and done["exit_code"] == 4
    log = whole_log(api, x["id"]).splitlines()
    assert log[0].startswith(f"[platform] uploading {code} (") and ".gitignore honoured" in log[0]
    assert log[-4].startswith("[platform] uploaded 5 entries") and " KB packed) in " in log[-4], log
    assert log[-3:] == ["training", "numbers 1 2 3", "numbers 1 2 3"], log
    checkout = Path(x["run_dir"]) / "checkout"  # the machine is this host: its run folder is readable here
    assert sorted(os.listdir(checkout)) == [".gitignore", "data-link", "notes.txt", "pkg", "train.py"]
    assert (checkout / "data-link").is_symlink() and os.readlink(checkout / "data-link") == "pkg/data.txt"
    assert not (checkout / ".git").exists() and not (checkout / "outputs").exists()
    assert oct((Path(x["run_dir"])).stat().st_mode & 0o777) == "0o700"


def test_a_plain_folder_goes_whole_less_git(api: httpx.Client, machine: str, roots: Path) -> None:
    code = roots / "plain"
    (code / "empty").mkdir(parents=True)
    (code / "run.sh").write_text("echo plain\n")
    (code / ".git").mkdir()  # not a repository (no HEAD): still never uploaded
    (code / ".git" / "secret").write_text("no\n")
    made = api.post("/experiments", json={"machine": machine, "folder": str(code) + "/./",
                                          "command": "bash run.sh; ls -A"})
    assert made.status_code == 201, made.text
    x = made.json()
    assert wait_ended(api, x["id"])["status"] == "succeeded"
    assert whole_log(api, x["id"]).splitlines()[-3:] == ["plain", "empty", "run.sh"]


def test_what_is_refused(api: httpx.Client, machine: str, roots: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret\n")
    (roots / "escape").symlink_to(outside)
    large = roots / "large"
    large.mkdir()
    (large / "weights.bin").write_bytes(os.urandom(100_000))

    before = len(api.get("/experiments").json()["experiments"])

    def post(**body: Any) -> httpx.Response:
        return api.post("/experiments", json={"machine": machine, "command": "true", **body})

    for body, field, words in (
        ({"folder": str(outside)}, "folder", "is outside the folders that may be uploaded"),
        ({"folder": str(roots / "escape")}, "folder", f"resolves to {outside}"),
        ({"folder": str(roots / "large" / ".." / ".." / outside.parent.name)}, "folder", "is outside"),
        ({"folder": str(roots / "missing")}, "folder", "does not exist on the platform's host"),
        ({"folder": str(large)}, "folder", "PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB"),
        ({"folder": "relative/path"}, "folder", "is not an absolute path"),
        ({"folder": str(large / "weights.bin")}, "folder", "is not a folder"),
        ({"folder": str(large), "repository": "https://example.com/r.git"}, "folder", "not both"),
        ({"folder": str(large), "ref": "main"}, "ref", "a folder is uploaded as it is"),
    ):
        answer = post(**body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["field"] == field and words in answer.json()["detail"], (body, answer.json())
        assert "Traceback" not in answer.text
    assert "PLATFORM_EXPERIMENTS_UPLOAD_ROOTS" in post(folder=str(outside)).json()["detail"]
    assert len(api.get("/experiments").json()["experiments"]) == before  # nothing was made


def test_uploads_are_off_unless_the_operator_sets_roots(tmp_path_factory: pytest.TempPathFactory,
                                                        sshd: SshServer, roots: Path) -> None:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8"}
    with running_platform(tmp_path_factory.mktemp("off"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack, \
            httpx.Client(base_url=stack.url + "/v0", timeout=120) as api:
        sshd.authorize(api.get("/machines/ssh-key").json()["authorized_keys_line"])
        machine = api.post("/machines", json={"ssh": sshd.ssh_command, "name": "box"}).json()["id"]
        (roots / "off").mkdir()
        answer = api.post("/experiments", json={"machine": machine, "folder": str(roots / "off"), "command": "true"})
        assert answer.status_code == 422 and answer.json()["field"] == "folder"
        assert "is off" in answer.json()["detail"] and "PLATFORM_EXPERIMENTS_UPLOAD_ROOTS" in answer.json()["detail"]
