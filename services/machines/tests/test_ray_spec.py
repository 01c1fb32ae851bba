"""An experiment's Ray settings: checked (422s naming the field), kept in the `experiments` row
(an older table without the `ray` column is upgraded in place), and the shell made of them
(`ray_script`) parses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa
from platform_database import open_engine
from platform_machines.errors import InvalidExperimentError
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.ray_cluster import worker_variables
from platform_machines.ray_script import head_command, worker_command, worker_poll_command
from platform_machines.ray_spec import RaySpec, RayWorker, checked_spec, ray_from_json, worker_run_id


def test_defaults_and_checks() -> None:
    spec = checked_spec(RaySpec(venv="", port=0, start_args="--num-cpus  1"))
    assert (spec.venv, spec.port, spec.start_args) == (".venv", 6379, "--num-cpus 1")
    for bad, field in ((RaySpec(venv="../up"), "ray.venv"), (RaySpec(venv="a b"), "ray.venv"),
                       (RaySpec(port=70000), "ray.port"), (RaySpec(head_address="a;b"), "ray.head_address"),
                       (RaySpec(start_args="--address=x:1"), "ray.start_args"),
                       (RaySpec(start_args="'unclosed"), "ray.start_args"),
                       (RaySpec(workers=tuple(RayWorker(f"m-{i}") for i in range(17))), "ray.workers")):
        with pytest.raises(InvalidExperimentError) as caught:
            checked_spec(bad)
        assert caught.value.field == field


def test_json_round_trip() -> None:
    spec = RaySpec(workers=(RayWorker("m-1", "w", "running", run_dir="/r"),), setup="true", port=7000)
    assert ray_from_json(spec.to_json()) == spec
    assert ray_from_json("") is None
    assert spec.with_worker(0, state="stopped").workers[0].state == "stopped"
    assert worker_run_id("x-1", 0) == "x-1-worker-1"


async def test_an_older_table_gets_the_ray_column(tmp_path: Path) -> None:
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    async with engine.begin() as conn:  # the table as it was before the Ray settings
        await conn.execute(sa.text(
            "CREATE TABLE experiments (id VARCHAR(32) PRIMARY KEY, team VARCHAR(64) NOT NULL, machine_id VARCHAR(32) "
            "NOT NULL, machine_name VARCHAR(200) NOT NULL, repository TEXT NOT NULL, ref VARCHAR(255) NOT NULL "
            "DEFAULT '', command TEXT NOT NULL, gpus INTEGER NOT NULL, gpu_indices TEXT NOT NULL DEFAULT '[]', "
            "gpu_uuids TEXT NOT NULL DEFAULT '[]', env_names TEXT NOT NULL DEFAULT '[]', status VARCHAR(16) NOT NULL, "
            "status_reason TEXT NOT NULL DEFAULT '', exit_code INTEGER, created_at FLOAT NOT NULL, started_at FLOAT "
            "NOT NULL DEFAULT 0, ended_at FLOAT NOT NULL DEFAULT 0, run_dir TEXT NOT NULL DEFAULT '', log_bytes "
            "BIGINT NOT NULL DEFAULT 0, platform_url TEXT NOT NULL DEFAULT '', forward_port INTEGER NOT NULL DEFAULT "
            "0, token_id VARCHAR(64) NOT NULL DEFAULT '', folder TEXT NOT NULL DEFAULT '', share_gpus BOOLEAN NOT "
            "NULL DEFAULT 0)"))
        await conn.execute(sa.text(
            "INSERT INTO experiments (id, team, machine_id, machine_name, repository, command, gpus, status, "
            "created_at) VALUES ('x-old', 't', 'm-1', 'box', '', 'true', 0, 'succeeded', 1.0)"))
    store = ExperimentStore(engine)
    await store.create_tables()
    assert (await store.get("x-old")).ray is None
    spec = RaySpec(workers=(RayWorker("m-2", "w"),), setup="uv venv .venv")
    await store.add(StoredExperiment(id="x-new", team="t", machine_id="m-1", machine_name="box", repository="",
                                     ref="", command="true", gpus=0, status="starting", ray=spec))
    assert (await store.get("x-new")).ray == spec
    await engine.dispose()


def test_the_shell_parses() -> None:
    spec = checked_spec(RaySpec(workers=(RayWorker("m-2"),), setup="echo 'it''s' && true", start_args="--num-cpus 1"))
    for script in (head_command(spec, "python train.py \"$RAY_ADDRESS\""), worker_command(spec, "10.0.0.1"),
                   worker_poll_command("x-1-worker-1")):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert "--num-cpus 1 --block" in worker_command(spec, "10.0.0.1")
    assert "ray start --address 10.0.0.1:6379" in worker_command(spec, "10.0.0.1")


def test_a_worker_gets_none_of_the_heads_gpus() -> None:
    head = {"CUDA_VISIBLE_DEVICES": "GPU-abc", "PLATFORM_TOKEN": "sim_x", "SEED": "1"}
    assert worker_variables(head) == {"PLATFORM_TOKEN": "sim_x", "SEED": "1"}
