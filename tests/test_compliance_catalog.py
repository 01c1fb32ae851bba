"""The compliance suite over the catalog's built-in entries, each through a real environment
server process (`platform_sdk.launch.instance_launch`) and a gRPC stream.

Every classic-control, Doom and Menagerie robot entry runs; of every other family file in
`platform_broker/builtin/*.toml` a deterministic sample (SAMPLE_PER_FAMILY entries, chosen by a
generator seeded with the file's name) runs, to keep CI fast. PLATFORM_COMPLIANCE_ALL=1 runs
every entry.
"""

from __future__ import annotations

import json
import os
import random
import tomllib
from importlib import resources
from pathlib import Path

import pytest
from platform_broker.catalog import BUILTIN_PACKAGE, parse_file
from platform_contracts.compliance import CHECKS, ComplianceOptions
from platform_sdk.check.runner import check_launch_spec
from platform_sdk.launch.instance_launch import LaunchSpec
from simulusion.control.v1 import control_pb2 as control_pb

RUN_EVERY_ENTRY = os.environ.get("PLATFORM_COMPLIANCE_ALL", "") not in ("", "0")
SAMPLE_PER_FAMILY = 3
FULL_FAMILIES = {"classic_control.toml", "doom.toml", "menagerie.toml"}
OPTIONS = ComplianceOptions(seed=2024, steps=12, snapshot_steps=8, warmup_steps=2)


def family_entries() -> dict[str, list[control_pb.CatalogEntry]]:
    """The built-in entries of each family file, in file order."""
    families = {}
    for item in sorted(resources.files(BUILTIN_PACKAGE).iterdir(), key=lambda f: f.name):
        if item.name.endswith(".toml"):
            data = tomllib.loads(item.read_text(encoding="utf-8"))
            families[item.name] = list(parse_file(data, Path(f"<built-in {item.name}>")).values())
    return families


def sample(family: str, entries: list[control_pb.CatalogEntry]) -> list[control_pb.CatalogEntry]:
    """The entries of `family` that run: all, or a sample that is the same on every run."""
    entries = [entry for entry in entries if not entry.image]  # built-ins run without Docker
    if RUN_EVERY_ENTRY or family in FULL_FAMILIES or len(entries) <= SAMPLE_PER_FAMILY:
        return entries
    chosen = set(random.Random(family).sample(range(len(entries)), SAMPLE_PER_FAMILY))
    return [entry for index, entry in enumerate(entries) if index in chosen]


FAMILIES = family_entries()
CHOSEN = [(family, entry) for family, entries in FAMILIES.items() for entry in sample(family, entries)]


def test_every_family_file_runs():
    assert "classic_control.toml" in FAMILIES
    chosen_families = {family for family, _ in CHOSEN}
    assert chosen_families == {family for family, entries in FAMILIES.items() if entries}
    for full in sorted(FULL_FAMILIES):
        assert [entry.id for family, entry in CHOSEN if family == full] == [entry.id for entry in FAMILIES[full]]
    assert CHOSEN == [(f, e) for f, entries in family_entries().items() for e in sample(f, entries)]  # stable


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("family", "entry"), CHOSEN, ids=[f"{f.removesuffix('.toml')}:{e.id}" for f, e in CHOSEN])
async def test_a_builtin_entry_complies(family: str, entry: control_pb.CatalogEntry, monkeypatch):
    if not os.environ.get("MUJOCO_GL"):
        monkeypatch.setenv("MUJOCO_GL", "egl")  # no display here: MuJoCo renders off screen
    spec = LaunchSpec(
        gymnasium_id=entry.gymnasium_id,
        factory=entry.factory,
        path=entry.path,
        kwargs=json.loads(entry.kwargs_json or "{}"),
    )
    run = await check_launch_spec(spec, OPTIONS, ready_timeout=90, call_timeout=60)
    assert [result.name for result in run.results] == list(CHECKS)
    failed = [f"{r.name}: {r.message}" for r in run.results if not r.passed]
    ended = f"\n(the server {run.server_ended})" if run.server_ended else ""
    assert not failed, f"{entry.id} ({family}) fails: {failed}{ended}\n--- server log tail ---\n{run.log_tail}"
    skipped = [r.name for r in run.results if r.skipped]
    assert not skipped, f"{entry.id}: every built-in renders frames, but {skipped} were skipped"
    snapshot = next(r for r in run.results if r.name == "snapshot")
    assert "frames" in snapshot.message  # frames, too, replay bit for bit
