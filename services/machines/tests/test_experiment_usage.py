"""GPU-hours of experiments per UTC day, team and machine (`experiment_usage`), and the store's
query behind them on a real SQLite database."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from platform_database import open_engine
from platform_machines.errors import InvalidExperimentError
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.experiment_usage import day_start, gpu_usage_rows, parse_day

DAY1 = day_start(dt.date(2024, 5, 1))
DAY2 = day_start(dt.date(2024, 5, 2))
DAY3 = day_start(dt.date(2024, 5, 3))
H = 3600.0


def experiment(id: str, gpus: int, started: float, ended: float = 0.0, team: str = "acme",
               machine: str = "m-1", status: str = "succeeded") -> StoredExperiment:
    return StoredExperiment(id=id, team=team, machine_id=machine, machine_name=f"box {machine}", repository="r",
                            ref="", command="c", gpus=gpus, status=status, started_at=started, ended_at=ended,
                            created_at=started or DAY1)


def table(rows: list) -> list[tuple[str, str, str, str, float, int]]:
    return [(r.day, r.team, r.machine_id, r.machine_name, round(r.gpu_hours, 6), r.experiments) for r in rows]


def test_gpus_times_hours_split_at_utc_midnights() -> None:
    rows = gpu_usage_rows([
        experiment("x-a", 2, DAY2 - 1 * H, DAY2 + 2 * H),  # 1 h on day 1, 2 h on day 2, two GPUs
        experiment("x-b", 1, DAY2 + 5 * H, DAY2 + 5.5 * H),
        experiment("x-c", 4, DAY1 + H, DAY1 + 2 * H, team="blue", machine="m-2"),
        experiment("x-d", 0, DAY1, DAY1 + H),  # no GPU: nothing
        experiment("x-e", 1, 0.0, status="cancelled"),  # cancelled while queued: never started
    ], DAY1, DAY3, now=DAY3 + H)
    assert table(rows) == [
        ("2024-05-01", "acme", "m-1", "box m-1", 2.0, 1),
        ("2024-05-01", "blue", "m-2", "box m-2", 4.0, 1),
        ("2024-05-02", "acme", "m-1", "box m-1", 4.5, 2),
    ]


def test_the_range_cuts_and_a_running_one_counts_until_now() -> None:
    running = experiment("x-r", 1, DAY1 + 22 * H, status="running")
    assert table(gpu_usage_rows([running], DAY2, DAY3, now=DAY2 + 3 * H)) == [
        ("2024-05-02", "acme", "m-1", "box m-1", 3.0, 1)]
    assert gpu_usage_rows([experiment("x-old", 1, DAY1, DAY1 + H)], DAY2, DAY3, now=DAY3) == []


def test_days_are_yyyy_mm_dd() -> None:
    assert parse_day("2024-05-01", "since") == dt.date(2024, 5, 1)
    for bad in ("2024/05/01", "2024-02-30", ""):
        with pytest.raises(InvalidExperimentError, match="since must be a date YYYY-MM-DD"):
            parse_day(bad, "since")


async def test_the_store_finds_what_ran_in_the_range(tmp_path: Path) -> None:
    engine = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}")
    store = ExperimentStore(engine)
    await store.create_tables()
    for x in (experiment("x-in", 1, DAY1 + H, DAY1 + 2 * H), experiment("x-running", 1, DAY1, status="running"),
              experiment("x-before", 1, DAY1 - 5 * H, DAY1 - H), experiment("x-after", 1, DAY3 + H, DAY3 + 2 * H),
              experiment("x-queued", 1, 0.0, status="queued"), experiment("x-cpu", 0, DAY1, DAY1 + H),
              experiment("x-blue", 1, DAY1, DAY1 + H, team="blue")):
        await store.add(x)
    found = await store.started_between(DAY1, DAY3)
    assert sorted(x.id for x in found) == ["x-blue", "x-in", "x-running"]
    assert sorted(x.id for x in await store.started_between(DAY1, DAY3, "blue")) == ["x-blue"]
    await engine.dispose()
