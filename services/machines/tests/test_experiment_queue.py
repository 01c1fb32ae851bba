"""The queue of experiments, GPU sharing and removing a machine, on `Experiments` against a real
sshd with the fake two-GPU nvidia-smi (platform_testing.sshd) and a real SQLite database: a
request for more GPUs than are free is queued and started in order as GPUs free up, with its
variables and token sealed meanwhile (and kept across a restart of the service); a queued one
that fails at once is just failed; share_gpus takes the least-loaded GPUs; removing a machine
is refused while its experiments run, or stops them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from platform_database import open_engine
from platform_machines.address_policy import AddressPolicy, parse_networks
from platform_machines.errors import InvalidExperimentError, MachineInUseError, MachineNotFoundError
from platform_machines.experiment_follower import FollowSettings
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.experiments import Experiments
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_removal import MachineRemoval
from platform_machines.machine_store import MachineStore, StoredMachine
from platform_machines.platform_key import PlatformKey, load_or_create_key
from platform_machines.queued_launches import QueuedLaunches, experiment_launches
from platform_machines.ray_spec import RaySpec, RayWorker
from platform_machines.ssh_connections import SshDialer
from platform_testing.sshd import SshServer
from sqlalchemy.ext.asyncio import AsyncEngine

WAIT_S = 30.0
SETTINGS = FollowSettings(public_url="http://platform.invalid", gateway=("127.0.0.1", 9), poll_interval=0.1,
                          lost_after=30.0, fail_fast=0.5)


@dataclass
class World:
    engine: AsyncEngine
    key: PlatformKey
    machines: MachineStore
    dialer: SshDialer
    machine: StoredMachine
    repo: Path
    ended: list[StoredExperiment] = field(default_factory=list)
    services: list[Experiments] = field(default_factory=list)

    def experiments(self, settings: FollowSettings = SETTINGS) -> Experiments:
        """A service's experiments (a new one is the service started again)."""
        async def on_end(x: StoredExperiment) -> None:
            self.ended.append(x)

        made = Experiments(ExperimentStore(self.engine), self.machines, self.dialer, settings, 1.0, on_end,
                           QueuedLaunches(self.engine, self.key))
        self.services.append(made)
        return made


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    (work / "README").write_text("train\n")
    subprocess.run([*git, "-C", str(work), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-q", "-m", "one"], check=True)
    return work


@pytest.fixture
async def world(tmp_path: Path, sshd: SshServer, repo: Path) -> AsyncIterator[World]:
    key = load_or_create_key(tmp_path / "config" / "ssh" / "id_ed25519")
    sshd.authorize(key.authorized_keys_line)
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    machines = MachineStore(engine)
    await machines.create_tables()
    await ExperimentStore(engine).create_tables()
    await QueuedLaunches(engine, key).create_tables()
    dialer = SshDialer(key, AddressPolicy(parse_networks("127.0.0.0/8")), 5.0)
    machine = await MachineRegistry(machines, dialer).add(sshd.ssh_command, "box", "default")
    made = World(engine, key, machines, dialer, machine, repo)
    yield made
    for experiments in made.services:
        for x in await experiments.store.list():
            if x.status in ("starting", "running"):
                await experiments.cancel(x.id)
        await experiments.stop()
    await engine.dispose()


async def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"waited {WAIT_S:g} s for {what}")


async def create(experiments: Experiments, w: World, command: str, gpus: int, token: str = "",
                 **more: Any) -> StoredExperiment:
    return await experiments.create(experiment_id="", team="default", machine_id=w.machine.id,
                                    repository=str(w.repo), ref=more.pop("ref", ""), command=command, gpus=gpus,
                                    env=more.pop("env", {}), token=token, token_id=f"tok-{token}", **more)


async def status_of(experiments: Experiments, experiment_id: str, *wanted: str) -> StoredExperiment:
    async def check() -> StoredExperiment | None:
        found = await experiments.store.get(experiment_id)
        return found if found.status in wanted else None
    return await wait_for(f"{experiment_id} to be {' or '.join(wanted)}", check)


async def ended(experiments: Experiments, experiment_id: str) -> StoredExperiment:
    async def check() -> StoredExperiment | None:
        found = await experiments.store.get(experiment_id)
        return found if found.ended_at else None
    return await wait_for(f"{experiment_id} to end", check)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


async def test_a_request_for_busy_gpus_is_queued_and_started_in_order(world: World) -> None:
    experiments = world.experiments()
    both = await create(experiments, world, "sleep 600", 2)
    assert both.status == "running" and both.gpu_indices == (0, 1)

    first = await create(experiments, world, 'printf %s "$PLATFORM_TOKEN $SEED $CUDA_VISIBLE_DEVICES" > ../seen; '
                                             "sleep 600", 1, token="sim_first-secret", env={"SEED": "7"})
    second = await create(experiments, world, "sleep 600", 1, token="sim_second")
    third = await create(experiments, world, "sleep 600", 1)
    cpu = await create(experiments, world, "true", 0)  # needs no GPU: never waits
    assert [x.status for x in (first, second, third)] == ["queued"] * 3 and cpu.status in ("running", "succeeded")
    assert first.gpu_indices == () and "waiting for 1 GPU of machine 'box' of its own" in first.status_reason
    assert f"GPU 0 by {both.id}" in first.status_reason
    assert "2 experiments queued before it" in third.status_reason
    positions = await experiments.store.queue_positions()
    assert [positions[x.id] for x in (first, second, third)] == [1, 2, 3]

    # Sealed while queued: the secrets are not in the database as they were given.
    async with world.engine.connect() as conn:
        sealed = (await conn.execute(sa.select(experiment_launches.c.sealed))).scalars().all()
    assert len(sealed) == 3 and not any(b"sim_first-secret" in bytes(s) or b"SEED" in bytes(s) for s in sealed)

    await experiments.cancel(both.id)
    started = [await status_of(experiments, x.id, "running") for x in (first, second)]
    assert sorted(i for x in started for i in x.gpu_indices) == [0, 1]
    assert (await experiments.store.get(third.id)).status == "queued"
    assert (await experiments.store.queue_positions())[third.id] == 1
    seen = Path(started[0].run_dir) / "seen"
    token, seed, gpu = (await wait_for("the first's variables", lambda: _read(seen))).split(" ")
    assert (token, seed, gpu) == ("sim_first-secret", "7", started[0].gpu_uuids[0])
    async with world.engine.connect() as conn:  # taken when started: only the third's is kept
        assert len((await conn.execute(sa.select(experiment_launches.c.experiment_id))).all()) == 1

    # Cancelling a queued one only marks it: it ended (its token is revoked), nothing ran.
    cancelled = await experiments.cancel(third.id)
    assert cancelled.status == "cancelled" and cancelled.ended_at and cancelled.status_reason == "cancelled while queued"
    assert cancelled.started_at == 0 and cancelled.run_dir == "" and third.id in [x.id for x in world.ended]
    async with world.engine.connect() as conn:
        assert (await conn.execute(sa.select(experiment_launches.c.experiment_id))).all() == []


async def _read(path: Path) -> str:
    return path.read_text() if path.exists() and path.read_text() else ""


async def test_queue_is_first_come_first_served(world: World) -> None:
    experiments = world.experiments()
    one = await create(experiments, world, "sleep 600", 1)
    wants_two = await create(experiments, world, "sleep 600", 2)
    assert wants_two.status == "queued"
    # One GPU is free, but an older request waits for both: a newer one waits behind it.
    wants_one = await create(experiments, world, "sleep 600", 1)
    assert wants_one.status == "queued" and "1 experiment queued before it" in wants_one.status_reason
    await experiments.cancel(one.id)
    assert (await status_of(experiments, wants_two.id, "running")).gpu_indices == (0, 1)
    assert (await experiments.store.get(wants_one.id)).status == "queued"


async def test_more_gpus_than_the_machine_has_is_still_a_422(world: World) -> None:
    experiments = world.experiments()
    with pytest.raises(InvalidExperimentError, match="has 2 GPUs .*not 3: ask for at most 2"):
        await create(experiments, world, "true", 3)
    assert await experiments.store.list() == []


async def test_a_queued_one_that_fails_at_once_or_does_not_clone_is_just_failed(world: World) -> None:
    experiments = world.experiments()
    both = await create(experiments, world, "sleep 600", 2)
    fails = await create(experiments, world, "echo broken >&2; exit 7", 1)
    bad_ref = await create(experiments, world, "true", 1, ref="no-such-branch")
    assert fails.status == bad_ref.status == "queued"
    await experiments.cancel(both.id)
    done = await ended(experiments, fails.id)
    assert done.status == "failed" and done.exit_code == 7
    assert (await experiments.store.read_log(fails.id, 0, 100)) == b"broken\n"
    no_ref = await ended(experiments, bad_ref.id)
    assert no_ref.status == "failed" and "cannot be checked out" in no_ref.status_reason
    assert {fails.id, bad_ref.id} <= {x.id for x in world.ended}  # their tokens are revoked


async def test_queued_ones_start_after_the_service_restarts(world: World) -> None:
    first = world.experiments()
    both = await create(first, world, "sleep 1", 2)
    waiting = await create(first, world, 'printf %s "$PLATFORM_TOKEN" > ../seen; sleep 600', 2, token="sim_kept")
    assert waiting.status == "queued"
    await first.stop()  # the service stops: the running command goes on, its end is seen after
    await asyncio.sleep(1.5)
    again = world.experiments()
    await again.resume()
    assert (await ended(again, both.id)).status == "succeeded"
    started = await status_of(again, waiting.id, "running")
    assert await wait_for("its token", lambda: _read(Path(started.run_dir) / "seen")) == "sim_kept"


async def test_share_gpus_takes_the_least_loaded_and_never_an_exclusive_one(world: World) -> None:
    experiments = world.experiments()
    alone = await create(experiments, world, "sleep 600", 1)
    assert alone.gpu_indices == (0,)
    shared_a = await create(experiments, world, "sleep 600", 1, share_gpus=True)
    shared_b = await create(experiments, world, "sleep 600", 1, share_gpus=True)
    assert shared_a.gpu_indices == shared_b.gpu_indices == (1,) and shared_a.share_gpus
    # Only GPU 1 is open to sharing; two are asked: queued, as an exclusive request would be.
    two = await create(experiments, world, "sleep 600", 2, share_gpus=True)
    assert two.status == "queued" and "to share" in two.status_reason
    exclusive = await create(experiments, world, "sleep 600", 1)
    assert exclusive.status == "queued"
    await experiments.cancel(alone.id)
    started = await status_of(experiments, two.id, "running")
    assert started.gpu_indices == (0, 1)  # GPU 0 (no load) and GPU 1 (shared by two)


async def test_removing_a_machine_is_refused_while_its_experiments_run_or_stops_them(world: World) -> None:
    experiments = world.experiments()
    removal = MachineRemoval(world.machines, experiments)
    running = await create(experiments, world, "sleep 600 & echo $! > ../child.pid; wait", 2)
    queued = await create(experiments, world, "sleep 600", 1)
    child = int(await wait_for("the child's pid", lambda: _read(Path(running.run_dir) / "child.pid")))
    with pytest.raises(MachineInUseError) as refused:
        await removal.remove(world.machine.id, stop_experiments=False)
    message = str(refused.value)
    assert f"{running.id} (running)" in message and f"{queued.id} (queued)" in message
    assert "stop_experiments=true" in message and pid_alive(child)
    assert (await world.machines.get(world.machine.id)).id == world.machine.id

    await removal.remove(world.machine.id, stop_experiments=True)
    with pytest.raises(MachineNotFoundError):
        await world.machines.get(world.machine.id)
    stopped, dropped = await experiments.store.get(running.id), await experiments.store.get(queued.id)
    assert stopped.status == "cancelled" and stopped.ended_at and "machine 'box' was removed" in stopped.status_reason
    assert dropped.status == "cancelled" and dropped.ended_at and dropped.started_at == 0
    assert not pid_alive(child)
    assert {running.id, queued.id} <= {x.id for x in world.ended}


async def test_a_machine_that_is_a_ray_worker_is_not_removed_from_under_its_experiment(world: World) -> None:
    experiments = world.experiments()
    removal = MachineRemoval(world.machines, experiments)
    other_head = await experiments.store.add(StoredExperiment(
        id="x-0000000000aa", team="t", machine_id="m-elsewhere", machine_name="head", repository="", ref="",
        command="python train.py", gpus=1, status="queued",
        ray=RaySpec(workers=(RayWorker(machine_id=world.machine.id, machine_name="box"),))))
    with pytest.raises(MachineInUseError) as refused:
        await removal.remove(world.machine.id, stop_experiments=False)
    assert f"{other_head.id} (queued)" in str(refused.value)
    assert (await world.machines.get(world.machine.id)).id == world.machine.id

    await removal.remove(world.machine.id, stop_experiments=True)
    cancelled = await experiments.store.get(other_head.id)
    assert cancelled.status == "cancelled" and "one of its Ray workers, was removed" in cancelled.status_reason
    with pytest.raises(MachineNotFoundError):
        await world.machines.get(world.machine.id)


async def test_removing_a_machine_without_experiments_running(world: World) -> None:
    experiments = world.experiments()
    done = await create(experiments, world, "echo hi", 0)
    await ended(experiments, done.id)
    await MachineRemoval(world.machines, experiments).remove(world.machine.id, stop_experiments=False)
    with pytest.raises(MachineNotFoundError):
        await world.machines.get(world.machine.id)
    kept = await experiments.store.get(done.id)  # an ended experiment and its log stay
    assert kept.status == "succeeded" and await experiments.store.read_log(done.id, 0, 100) == b"hi\n"


async def test_an_experiment_cancelled_while_it_clones_never_runs_on(world: World, sshd: SshServer) -> None:
    """Cancel while the clone runs (a `git` first on the machine's PATH that waits for the test):
    the start that follows stops what it started, and the experiment stays cancelled."""
    cloning, go = sshd.root / "cloning", sshd.root / "go"
    wrapper = sshd.bin / "git"
    wrapper.write_text(f"#!/bin/sh\ntouch {cloning}\ni=0\nwhile [ ! -f {go} ] && [ $i -lt 300 ]; do sleep 0.1; "
                       f"i=$((i+1)); done\nexec /usr/bin/git \"$@\"\n")
    wrapper.chmod(0o755)
    experiments = world.experiments()
    marker = sshd.root / "ran-on"
    creating = asyncio.create_task(create(experiments, world, f"sleep 2; touch {marker}; sleep 60", 1))
    await wait_for("the clone to begin", lambda: _exists(cloning))
    [starting] = await experiments.store.list()
    assert starting.status == "starting"
    cancelled = await experiments.cancel(starting.id)
    assert cancelled.status == "cancelled"
    go.touch()
    answered = await asyncio.wait_for(creating, WAIT_S)
    assert answered.status == "cancelled", "the start must not turn a cancelled experiment back to running"
    ended = await wait_for("the cancelled experiment to end", lambda: _ended(experiments, starting.id))
    assert ended.status == "cancelled" and ended.ended_at
    await asyncio.sleep(3)
    assert not marker.exists(), "the command of a cancelled experiment ran on"


async def _exists(path: Path) -> bool:
    return path.exists()


async def _ended(experiments: Experiments, experiment_id: str) -> StoredExperiment | None:
    found = await experiments.store.get(experiment_id)
    return found if found.ended_at else None


async def test_started_at_is_when_the_command_started_not_when_the_fail_fast_wait_ended(world: World) -> None:
    """The launch waits `fail_fast` (3 s here) for a quick failure before it answers; the command
    (on this host, so on the same clock) prints when it started."""
    experiments = world.experiments(replace(SETTINGS, fail_fast=3.0))
    started = await create(experiments, world, "date +%s.%N; sleep 30", 0)
    log = await wait_for("the command's first line", lambda: _log_of(experiments, started.id))
    assert abs(started.started_at - float(log.split()[0])) < 1.5, (started.started_at, log)


async def _log_of(experiments: Experiments, experiment_id: str) -> str:
    return (await experiments.store.read_log(experiment_id, 0, 100)).decode()
