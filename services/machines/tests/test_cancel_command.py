"""The cancel script run by a real bash against a real process group in a scratch home."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from platform_machines.experiment_script import cancel_command


def run_folder(home: Path, experiment_id: str) -> Path:
    folder = home / ".simulusion" / "experiments" / experiment_id
    folder.mkdir(parents=True)
    return folder


def alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_cancel_stops_the_whole_group_and_keeps_the_folder(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "x-cancel")
    group = subprocess.Popen(["bash", "-c", "sleep 60 & sleep 60 & wait"], start_new_session=True)
    (folder / "pgid").write_text(str(group.pid))
    subprocess.run(
        ["bash", "-s"],
        input=cancel_command("x-cancel", 1.0).encode(),
        env={**os.environ, "HOME": str(tmp_path)},
        check=True,
        timeout=20,
    )
    group.wait(timeout=10)
    deadline = time.monotonic() + 5
    while alive(group.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(group.pid), "the children of the group outlived the cancel"
    assert folder.is_dir(), "a plain cancel keeps the run folder and its log"


def test_a_start_cut_off_is_stopped_and_its_folder_removed(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "x-cut")
    group = subprocess.Popen(["sleep", "60"], start_new_session=True)
    (folder / "pgid").write_text(str(group.pid))
    (folder / "log").write_text("half a start\n")
    subprocess.run(
        ["bash", "-s"],
        input=cancel_command("x-cut", 0.0, remove=True).encode(),
        env={**os.environ, "HOME": str(tmp_path)},
        check=True,
        timeout=20,
    )
    assert group.wait(timeout=10) == -signal.SIGTERM
    assert not folder.exists()


def test_a_start_cut_off_before_its_group_existed_removes_the_folder(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "x-early")
    (folder / "checkout").mkdir()
    subprocess.run(
        ["bash", "-s"],
        input=cancel_command("x-early", 0.0, remove=True).encode(),
        env={**os.environ, "HOME": str(tmp_path)},
        check=True,
        timeout=20,
    )
    assert not folder.exists()
