"""The runs' adapters: navix's logs (shaped exactly as navix 4.0's `Experiment.run` returns them:
seeds, updates, steps, envs) reduced as `derive_episodic_metrics` reduces them, one run per
seed against `agent/train/frames`; ai_traineree's data-logger calls as its `EnvRunner` and
agents make them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from platform_sdk.runs import RunDataLogger, log_navix, start_run
from platform_sdk.runs.navix import derive_episodic_metrics

SEEDS, UPDATES, STEPS, ENVS = 2, 5, 4, 3


def navix_logs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    done = rng.random((SEEDS, UPDATES, STEPS, ENVS)) < 0.3
    done[0, 2] = False  # seed 0 finishes no episode in update 2: navix's NaN there
    returns = np.where(rng.random(done.shape) < 0.5, 1.0, rng.random(done.shape)).astype(np.float32)
    frames = np.cumsum(np.full((SEEDS, UPDATES), STEPS * ENVS), axis=1).astype(np.int32)
    return {
        "agent/train/done_mask": done,
        "agent/train/returns": returns,
        "agent/train/lengths": rng.integers(1, 50, done.shape).astype(np.int32),
        "agent/train/frames": frames,
        "agent/train/updates": np.tile(np.arange(1, UPDATES + 1, dtype=np.int32), (SEEDS, 1)),
        "agent/diagnostics/entropy": rng.random((SEEDS, UPDATES)).astype(np.float32),
        "experiment/costs/wall_time": np.full((SEEDS, UPDATES), 12.5, dtype=np.float32),
        "experiment/costs/fps": np.full((SEEDS, UPDATES), 4800.0, dtype=np.float32),
    }


@dataclasses.dataclass(frozen=True)
class PPOHparams:  # navix's hyperparameters are frozen structs (flax's, dataclasses underneath)
    budget: int = 1000
    lr: float = 2.5e-4
    num_envs: int = ENVS


def test_the_reduction_is_navixs_masked_mean_over_finished_episodes():
    logs = navix_logs(np.random.default_rng(0))
    metrics = derive_episodic_metrics(logs)
    done, returns = logs["agent/train/done_mask"], logs["agent/train/returns"]
    for seed in range(SEEDS):
        for update in range(UPDATES):
            finished = done[seed, update]
            got = metrics["agent/episode/returns"][seed, update]
            if not finished.any():
                assert np.isnan(got)
                continue
            assert got == pytest.approx(returns[seed, update][finished].mean(), rel=1e-6)
            assert metrics["agent/episode/length"][seed, update] == pytest.approx(
                logs["agent/train/lengths"][seed, update][finished].mean())
            assert metrics["agent/episode/success_rate"][seed, update] == pytest.approx(
                (returns[seed, update][finished] == 1.0).mean())
    assert metrics["agent/episode/returns"].shape == (SEEDS, UPDATES)


@pytest.mark.parametrize("key", ["agent/train/done_mask", "agent/train/lengths", "agent/train/returns"])
def test_a_missing_raw_buffer_raises_navixs_key_error(key, runs_api):
    logs = navix_logs(np.random.default_rng(1))
    del logs[key]
    with pytest.raises(KeyError, match=f"logs is missing required key\\(s\\): '{key}'"):
        log_navix(logs, PPOHparams(), url=runs_api.url)
    assert runs_api.runs == {}  # nothing was recorded


def test_log_navix_records_one_run_per_seed_against_frames(runs_api):
    logs = navix_logs(np.random.default_rng(2))
    runs = log_navix(logs, PPOHparams(), name="ppo-empty", seeds=[7, 8], url=runs_api.url, tags=["navix"])
    metrics = derive_episodic_metrics(logs)
    assert [run.name for run in runs] == ["ppo-empty seed 7", "ppo-empty seed 8"]
    for index, run in enumerate(runs):
        stored = runs_api.runs[run.id]
        assert (stored["group"], stored["seed"], stored["state"], stored["tags"]) == ("ppo-empty", 7 + index,
                                                                                      "finished", ["navix"])
        assert stored["hparams"] == {"budget": 1000, "lr": 2.5e-4, "num_envs": ENVS}
        frames = logs["agent/train/frames"][index].tolist()
        for name in ("agent/episode/returns", "agent/episode/length", "agent/episode/success_rate",
                     "experiment/costs/fps", "experiment/costs/wall_time"):
            expected = [(frame, float(value)) for frame, value in zip(frames, metrics[name][index], strict=True)
                        if np.isfinite(value)]
            got = runs_api.series(run.id, name)
            assert [step for step, _ in got] == [step for step, _ in expected]
            assert [value for _, value in got] == pytest.approx([value for _, value in expected])
        assert runs_api.series(run.id, "agent/diagnostics/entropy") == []  # the five headline metrics only
        assert all(point["frames"] == point["step"] for (rid, _, _), point in runs_api.points.items() if rid == run.id)
    seed0 = runs_api.series(runs[0].id, "agent/episode/returns")
    assert len(seed0) == UPDATES - 1  # the update without a finished episode is left out
    assert runs_api.runs[runs[0].id]["summary"]["experiment/costs/fps"] == 4800.0


def test_arrays_of_other_shapes_are_refused_naming_them(runs_api):
    logs = navix_logs(np.random.default_rng(3))
    logs["experiment/costs/fps"] = np.ones((SEEDS + 1, UPDATES))
    with pytest.raises(ValueError, match="experiment/costs/fps is shaped"):
        log_navix(logs, url=runs_api.url)
    with pytest.raises(ValueError, match="3 seeds given for a leading axis of 2"):
        log_navix(navix_logs(np.random.default_rng(3)), seeds=[1, 2, 3], url=runs_api.url)


def test_ai_traineree_logger_calls_become_curves(runs_api):
    run = start_run("dqn", url=runs_api.url, flush_every=0.05)
    logger = RunDataLogger(run)
    # what EnvRunner.__init__, log_episode_metrics, an agent's log_metrics and the end of run() call
    logger.set_hparams(hparams={"lr": 1e-3, "gamma": 0.99, "update_freq": 1})
    for episode in (1, 2):
        logger.log_value("episode/epsilon", 1.0 / episode, episode)
        logger.log_value("episode/avg_score", 10.0 * episode, episode)
        logger.log_value("episode/score", 12.0 * episode, episode)
        logger.log_value("episode/iterations", 20 * episode, episode)
    logger.log_value("loss/agent", np.float32(0.25), 40)
    logger.log_values_dict("env/action", {"0": 1, "1": 0}, 40)
    logger.create_histogram("metric/batch_errors", np.array([1.0, 2.0, 6.0]), 40)
    logger.add_histogram("dist/Q_0", min=-10.0, max=10.0, num=3, sum=1.0, sum_squares=0.5,
                         bucket_limits=np.array([-5.0, 0.0, 5.0]), bucket_counts=np.array([0.25, 0.5, 0.25]),
                         global_step=40)
    logger.set_hparams(hparams={"lr": 1e-3, "gamma": 0.99, "update_freq": 1, "hparam/total_iterations": 60,
                                "hparam/total_episodes": 2, "hparam/score": 20.0})
    logger.close()
    stored = runs_api.runs[run.id]
    assert stored["hparams"] == {"lr": 1e-3, "gamma": 0.99, "update_freq": 1}
    assert stored["summary"] == {"total_iterations": 60, "total_episodes": 2, "score": 20.0}
    assert runs_api.series(run.id, "episode/score") == [(1, 12.0), (2, 24.0)]
    assert runs_api.series(run.id, "loss/agent") == [(40, 0.25)]
    assert runs_api.series(run.id, "env/action/0") == [(40, 1.0)]
    assert runs_api.series(run.id, "metric/batch_errors/mean") == [(40, 3.0)]
    assert runs_api.series(run.id, "dist/Q_0/mean") == [(40, 0.0)]
    assert runs_api.series(run.id, "dist/Q_0/max") == [(40, 10.0)]
    assert stored["state"] == "finished"
