"""A command alone (no repository, no folder: an empty checkout) and reading a file of its run
folder by byte range (`ExperimentFiles`, platform.machines.experiments.fetch), against a real
sshd (platform_testing.sshd, whose sessions' HOME is a scratch folder of this host) and SQLite."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from platform_database import open_engine
from platform_machines.address_policy import AddressPolicy, parse_networks
from platform_machines.errors import InvalidExperimentError
from platform_machines.experiment_files import ExperimentFiles, checked_path
from platform_machines.experiment_follower import FollowSettings
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.experiments import Experiments
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_store import MachineStore
from platform_machines.platform_key import load_or_create_key
from platform_machines.queued_launches import QueuedLaunches
from platform_machines.ssh_connections import SshDialer
from platform_testing.sshd import SshServer

SETTINGS = FollowSettings(public_url="http://platform.invalid", gateway=("127.0.0.1", 9), poll_interval=0.1,
                          lost_after=30.0, fail_fast=0.5)


@pytest.fixture
async def parts(tmp_path: Path, sshd: SshServer) -> AsyncIterator[tuple[Experiments, ExperimentFiles, str]]:
    key = load_or_create_key(tmp_path / "ssh" / "id_ed25519")
    sshd.authorize(key.authorized_keys_line)
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    machines = MachineStore(engine)
    store = ExperimentStore(engine)
    launches = QueuedLaunches(engine, key)
    for made in (machines, store, launches):
        await made.create_tables()
    dialer = SshDialer(key, AddressPolicy(parse_networks("127.0.0.0/8")), 5.0)
    machine = await MachineRegistry(machines, dialer).add(sshd.ssh_command, "box", "default")

    async def on_end(_x: StoredExperiment) -> None:
        return None

    experiments = Experiments(store, machines, dialer, SETTINGS, 1.0, on_end, launches)
    files = ExperimentFiles(store, machines, dialer)
    yield experiments, files, machine.id
    await files.close()
    await experiments.stop()
    await engine.dispose()


async def test_command_alone_and_its_files_by_range(parts: tuple[Experiments, ExperimentFiles, str],
                                                    sshd: SshServer) -> None:
    experiments, files, machine_id = parts
    command = ("ls -A | wc -l > ../listing; mkdir -p ../logs; "
               "python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 4000)' > ../logs/data.bin")
    x = await experiments.create(experiment_id="", team="default", machine_id=machine_id, repository="", ref="",
                                 command=command, gpus=0, env={}, token="", token_id="")
    deadline = time.monotonic() + 30
    while not (await experiments.store.get(x.id)).ended_at:
        assert time.monotonic() < deadline, "the experiment did not end"
        await asyncio.sleep(0.1)
    assert (await experiments.store.get(x.id)).status == "succeeded"
    run_dir = sshd.home / ".simulusion" / "experiments" / x.id
    assert (run_dir / "listing").read_text().strip() == "0"  # the checkout was an empty folder
    whole = (run_dir / "logs" / "data.bin").read_bytes()
    first = await files.fetch(x.id, "logs/data.bin", 0, 0)
    assert first.size == len(whole) == 1_024_000 and first.data == whole[:512 * 1024]
    middle = await files.fetch(x.id, "logs/data.bin", 1000, 300)
    assert middle.offset == 1000 and middle.data == whole[1000:1300]
    end = await files.fetch(x.id, "logs/data.bin", len(whole) - 10, 0)
    assert end.data == whole[-10:]
    with pytest.raises(InvalidExperimentError, match="no file logs/other.eval"):
        await files.fetch(x.id, "logs/other.eval", 0, 0)
    assert files.connections.dials == 1  # every read on the one connection kept since the first

    # A kept connection that broke (its link dropped) is dialled again, once, by the next read.
    for kept in list(files.connections._kept.values()):
        kept.connection.abort()
    again = await files.fetch(x.id, "logs/data.bin", 5, 10)
    assert again.data == whole[5:15] and files.connections.dials == 2
    await files.close()
    assert files.connections._kept == {}


async def test_ref_without_repository_is_refused(parts: tuple[Experiments, ExperimentFiles, str]) -> None:
    experiments, _files, machine_id = parts
    with pytest.raises(InvalidExperimentError, match="ref is for a repository") as refused:
        await experiments.create(experiment_id="", team="default", machine_id=machine_id, repository="", ref="main",
                                 command="true", gpus=0, env={}, token="", token_id="")
    assert refused.value.field == "ref"


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "logs/../../x", "a\nb"])
def test_paths_outside_the_run_folder_are_refused(path: str) -> None:
    with pytest.raises(InvalidExperimentError, match="inside the run folder"):
        checked_path(path)
