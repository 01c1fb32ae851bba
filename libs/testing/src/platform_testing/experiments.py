"""What tests of machines and experiments share, against the real gateway (`/v0` routes) and a
real sshd (platform_testing.sshd): a committed git repository to clone by path, a machine added
with the platform's key, and an experiment's whole log and end read through the API."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from platform_testing.sshd import SshServer

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]


def committed_repository(work: Path, files: dict[str, str], bare: Path | None = None) -> Path:
    """`files` (name -> text) committed on main in a new repository at `work`; with `bare`, a
    bare clone there (what a machine clones by path). Returns the repository to clone."""
    work.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (work / name).write_text(text)
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    subprocess.run([*GIT, "-C", str(work), "add", *files], check=True)
    subprocess.run([*GIT, "-C", str(work), "commit", "-q", "-m", "files"], check=True)
    if bare is None:
        return work
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def add_machine(api: httpx.Client, sshd: SshServer, name: str = "box") -> dict[str, Any]:
    """`sshd` given the platform's key and added by its SSH command; the machine's reply.
    `api`'s base URL ends in /v0."""
    sshd.authorize(api.get("/machines/ssh-key").json()["authorized_keys_line"])
    added = api.post("/machines", json={"ssh": sshd.ssh_command, "name": name})
    assert added.status_code == 201, added.text
    return dict(added.json())


def whole_log(api: httpx.Client, experiment_id: str) -> str:
    """An ended experiment's log, read by offset to its end."""
    text, offset = "", 0
    while True:
        page = api.get(f"/experiments/{experiment_id}/logs", params={"offset": offset}).json()
        text += str(page["text"])
        offset = int(page["next_offset"])
        if page["ended"]:
            return text


def wait_ended(api: httpx.Client, experiment_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """The experiment once it has ended (a 503 while the machines service restarts is waited out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = api.get(f"/experiments/{experiment_id}")
        if answer.status_code == 200 and answer.json()["ended_at"]:
            return dict(answer.json())
        assert answer.status_code in (200, 503), answer.text
        time.sleep(0.2)
    raise AssertionError(f"experiment {experiment_id} did not end within {timeout:g} s")
