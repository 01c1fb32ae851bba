"""platform_envs.robots.menagerie: robots from a local copy (MENAGERIE_ROOT), the prefetch command, and a
download on first use through a local HTTP server standing in for Menagerie's release assets.

Nothing here reaches the internet. The served archive is built in the test from the local copy of
the Booster T1, so it is not Menagerie's release asset: its digest differs from the one in
mujoco-menagerie's registry. With the registry's digest the download must fail, in one line,
after its progress was logged; with the registry's entry pointed at the served archive's digest
(the only change), the robot downloads into the cache and loads from there.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import logging
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_envs.robots.menagerie import CATALOG_ROBOTS, load_spec, package, robot_path
from platform_envs.robots.errors import RobotError

ROBOT = "booster_t1"  # the smallest humanoid: 1.8 MB as Menagerie ships it


def _command(*args: str, env: dict[str, str] | None = None,
             module: str = "platform_sdk.menagerie") -> subprocess.CompletedProcess[str]:
    """The prefetch command as the overview spells it (`python -m platform_sdk.menagerie`)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )


# -- a local copy -------------------------------------------------------------------------------


def test_robots_come_from_menagerie_root(menagerie_root: Path) -> None:
    for robot in CATALOG_ROBOTS:
        assert robot_path(robot) == menagerie_root / robot
    spec = load_spec("unitree_h1")  # the default scene: the robot and a floor
    model = spec.compile()
    assert model.nu == 19 and model.geom("floor").id >= 0
    arm = load_spec("franka_emika_panda", "panda_nohand").compile()
    assert arm.nu == 7  # the arm without its hand's actuator


def test_unknown_robots_and_entries_are_one_line_errors(menagerie_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(RobotError, match="unknown Menagerie robot 'nosuch'; the catalog's robots: franka_emika_panda") as unknown:
        robot_path("nosuch")
    with pytest.raises(RobotError, match="has no entry 'nosuch'; its entries: scene, t1") as entry:
        load_spec(ROBOT, "nosuch")
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))  # a copy without the robot
    with pytest.raises(RobotError, match=f"not found under MENAGERIE_ROOT={tmp_path}") as missing:
        robot_path(ROBOT)
    for error in (unknown, entry, missing):
        assert "\n" not in str(error.value)
    assert "unset it to download, or put the robot's folder there" in str(missing.value)


def test_the_prefetch_command(menagerie_root: Path) -> None:
    fetched = _command(ROBOT, "unitree_h1")
    assert fetched.returncode == 0, fetched.stderr
    assert fetched.stdout.splitlines() == [f"{ROBOT}: {menagerie_root / ROBOT}", f"unitree_h1: {menagerie_root / 'unitree_h1'}"]
    everything = _command()  # no names: the catalog's robots
    assert [line.split(":")[0] for line in everything.stdout.splitlines()] == list(CATALOG_ROBOTS)
    listed = _command("--list")
    assert listed.returncode == 0 and set(CATALOG_ROBOTS) <= set(listed.stdout.split())


def test_an_unknown_robot_exits_1_with_one_line(menagerie_root: Path) -> None:
    result = _command("nosuch")
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: unknown Menagerie robot 'nosuch'; the catalog's robots: ")
    assert all(robot in lines[0] for robot in CATALOG_ROBOTS)


# -- downloading --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Served:
    url: str
    archive: Path
    requests: list[str]


@pytest.fixture(scope="module")
def served(menagerie_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """An HTTP server on localhost serving the Booster T1 as `<robot>/...` members of a .tar.xz
    under the asset name mujoco-menagerie's registry gives it."""
    folder = tmp_path_factory.mktemp("release")
    archive = folder / package().get(ROBOT).asset
    with tarfile.open(archive, "w:xz", preset=1) as tar:
        tar.add(menagerie_root / ROBOT, arcname=ROBOT)
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            requests.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}", archive, requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def download_env(served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No local copy: robots download from the served folder into a fresh cache."""
    monkeypatch.delenv("MENAGERIE_ROOT", raising=False)
    monkeypatch.setenv("MENAGERIE_BASE_URL", served.url)
    cache = tmp_path / "cache"
    monkeypatch.setenv("MENAGERIE_CACHE_DIR", str(cache))
    served.requests.clear()
    return cache


def _progress_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"downloading Menagerie robot {ROBOT}: ")]


def test_a_download_logs_its_progress_and_a_checksum_mismatch_is_one_line(
    served: Served, download_env: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="platform_envs.robots.menagerie")
    with pytest.raises(RobotError) as failed:
        robot_path(ROBOT)
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(f"cannot get Menagerie robot '{ROBOT}': {served.archive.name} does not match the digest")
    assert "set MENAGERIE_ROOT to a local copy" in message
    assert served.requests == [f"/{served.archive.name}"]  # fetched from MENAGERIE_BASE_URL, once
    total = f"{served.archive.stat().st_size / 2**20:.1f}"
    stderr = _progress_lines(capsys.readouterr().err)
    logged = _progress_lines("\n".join(record.getMessage() for record in caplog.records))
    assert stderr and stderr == logged  # the same lines in the log and on stderr
    assert stderr[-1] == f"downloading Menagerie robot {ROBOT}: {total}/{total} MB"  # the last one: done
    assert not (download_env / "models").exists() or not any((download_env / "models").iterdir())  # nothing published


def test_the_prefetch_command_shows_progress_then_the_failure_in_one_line(served: Served, download_env: Path) -> None:
    result = _command(ROBOT, env=dict(os.environ))  # stderr is a pipe: progress as lines, not a bar
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert _progress_lines(result.stderr) == lines[:-1] and lines[:-1], result.stderr
    assert lines[-1].startswith(f"error: cannot get Menagerie robot '{ROBOT}': ") and "does not match the digest" in lines[-1]


def test_a_robot_downloads_on_first_use_into_the_cache_and_loads_from_it(
    served: Served, download_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = package().bundled()
    listed = registry.robots[ROBOT]
    digest = hashlib.sha256(served.archive.read_bytes()).hexdigest()
    # the registry's entry for the served archive, as Menagerie's release would list it
    monkeypatch.setitem(
        registry.robots, ROBOT,
        dataclasses.replace(listed, sha256=digest, download_size=served.archive.stat().st_size),
    )
    path = robot_path(ROBOT)
    assert path.is_relative_to(download_env) and (path / "t1.xml").is_file()
    assert _progress_lines(capsys.readouterr().err)
    model = load_spec(ROBOT).compile()  # from the cache now
    assert model.nu == 23
    assert served.requests == [f"/{served.archive.name}"]  # downloaded once: the second use found it cached
    assert _progress_lines(capsys.readouterr().err) == []


def test_the_command_also_runs_under_the_environments_own_name() -> None:
    done = _command("--help", module="platform_envs.robots.menagerie")
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m platform_envs.robots.menagerie")
    assert _command("--help").stdout.startswith("usage: python -m platform_sdk.menagerie")
