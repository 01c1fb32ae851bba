"""`platform_sdk.runs.Run` against a stand-in of the runs API (a real HTTP server): batching,
the client's own id, points kept while the platform answers 503 and sent once it is back,
refusals reported and dropped, bad names and counts refused at `log`."""

from __future__ import annotations

import dataclasses
import logging
import time

import pytest
from platform_sdk.runs import Run, start_run
from platform_sdk.runs.sender import merge_changes


@pytest.fixture
def api(runs_api):
    return runs_api


def test_points_are_sent_in_batches_with_the_runs_fields(api):
    with start_run("ppo", url=api.url, hparams={"lr": 3e-4}, tags=["a"], seed=3, flush_every=0.05) as run:
        for step in range(7000):
            run.log({"loss": step * 0.5, "return": float(step)}, step=step, frames=step * 4)
        assert run.flush(timeout=20)
    stored = api.runs[run.id]
    assert (stored["name"], stored["group"], stored["seed"], stored["hparams"], stored["tags"]) == (
        "ppo", "ppo", 3, {"lr": 3e-4}, ["a"])
    assert stored["state"] == "finished"
    assert api.series(run.id, "loss")[:2] == [(0, 0.0), (1, 0.5)] and len(api.series(run.id, "loss")) == 7000
    point = api.points[(run.id, "return", 6999)]
    assert point["frames"] == 6999 * 4 and point["time"] > 0
    posts = [path for method, path in api.requests if method == "POST" and path.endswith("/metrics")]
    assert len(posts) >= 3  # 14,000 points, at most 5,000 a request
    assert run.url.endswith(f"/runs/{run.id}")


def test_what_is_logged_while_the_platform_is_away_is_sent_when_it_is_back(api, caplog):
    api.unavailable = True
    caplog.set_level(logging.WARNING, logger="platform_sdk.runs")
    run = Run("through-a-restart", url=api.url, flush_every=0.05)
    for step in range(50):
        run.log({"score": step}, step=step)
    assert not run.flush(timeout=1.0)  # nothing can be sent yet
    assert run.id not in api.runs
    assert any("kept and sent when it is back" in r.getMessage() for r in caplog.records)
    api.unavailable = False
    for step in range(50, 60):
        run.log({"score": step}, step=step)
    assert run.finish(timeout=30)
    assert [step for step, _ in api.series(run.id, "score")] == list(range(60))
    assert api.runs[run.id]["state"] == "finished"
    assert any("is back after" in r.getMessage() for r in caplog.records)


def test_a_refused_batch_is_reported_and_dropped_and_logging_goes_on(api, caplog):
    caplog.set_level(logging.WARNING, logger="platform_sdk.runs")
    api.refuse_points = True
    run = Run("refused", url=api.url, flush_every=0.05)
    run.log({"x": 1}, step=0)
    assert run.flush(timeout=10)
    assert any("refused 1 points" in r.getMessage() for r in caplog.records)
    api.refuse_points = False
    run.log({"x": 2}, step=1)
    run.finish(timeout=10)
    assert api.series(run.id, "x") == [(1, 2.0)]


def test_nan_is_skipped_with_one_warning_per_name(api, caplog):
    caplog.set_level(logging.WARNING, logger="platform_sdk.runs")
    run = Run("nan", url=api.url, flush_every=0.05)
    for step in range(3):
        run.log({"loss": float("nan"), "ok": 1.0}, step=step)
    run.finish(timeout=10)
    assert len([r for r in caplog.records if "NaN or infinite" in r.getMessage()]) == 1
    assert len(api.series(run.id, "ok")) == 3 and api.series(run.id, "loss") == []


def test_bad_names_steps_and_ids_are_refused_at_once(api):
    run = Run("bad", url=api.url)
    with pytest.raises(ValueError, match="metric name 'has space'"):
        run.log({"has space": 1.0}, step=0)
    with pytest.raises(ValueError, match="step must be a whole number of at least 0"):
        run.log({"ok": 1.0}, step=-1)
    with pytest.raises(ValueError, match="step must be a whole number"):
        run.log({"ok": 1.0}, step=1.5)
    with pytest.raises(ValueError, match="state must be one of"):
        run.update(state="done")
    run.finish(timeout=10)
    with pytest.raises(ValueError, match="'run-' followed by"):
        Run("x", url=api.url, run_id="nope")


def test_a_run_continues_under_its_id_and_changes_merge(api):
    first = Run("resumed", url=api.url, run_id="run-fixed-1", tags=["a"], flush_every=0.05)
    first.log({"r": 1}, step=0)
    first.update(tags=["b"], summary={"best": 1})
    first.finish("failed", timeout=10)
    again = Run("resumed", url=api.url, run_id="run-fixed-1", flush_every=0.05)
    again.log({"r": 2}, step=1)
    again.update(summary={"last": 2})
    again.finish(timeout=10)
    stored = api.runs["run-fixed-1"]
    assert stored["state"] == "finished" and stored["summary"] == {"best": 1, "last": 2}
    assert api.series("run-fixed-1", "r") == [(0, 1.0), (1, 2.0)]


def test_hyperparameters_from_a_frozen_dataclass(api):
    @dataclasses.dataclass(frozen=True)
    class Params:
        lr: float = 1e-3
        layers: tuple[int, ...] = (64, 64)
        debug: bool = False

    run = Run("dc", url=api.url, hparams=Params(), flush_every=0.05)
    run.finish(timeout=10)
    assert api.runs[run.id]["hparams"] == {"lr": 1e-3, "layers": "(64, 64)", "debug": False}


def test_the_queue_keeps_the_latest_points_when_full(api):
    api.unavailable = True
    run = Run("small", url=api.url, max_queued=10, flush_every=0.05)
    for step in range(25):
        run.log({"v": step}, step=step)
    api.unavailable = False
    time.sleep(0.1)
    assert run.finish(timeout=30)
    assert [step for step, _ in api.series(run.id, "v")] == list(range(15, 25))


def test_changes_merge_as_the_api_merges_them():
    into = {"tags": ["a"], "summary": {"x": 1}}
    merge_changes(into, {"tags": ["a", "b"], "summary": {"y": 2}, "state": "finished"})
    assert into == {"tags": ["a", "b"], "summary": {"x": 1, "y": 2}, "state": "finished"}
