"""Ray RLlib's training results into a run: `config.callbacks(run_callback("ppo-cartpole"))`.

The callback lives in the algorithm's process; Ray also builds it in every env runner, where it
only adds the runner's session to the run (`on_environment_created`: with the Gymnasium id's
vector entry point each env runner steps one batched session). At `on_algorithm_init` it starts the run (its hyperparameters: the config's
scalar settings) and at every `on_train_result` it records the result's numbers, flattened to
names such as `env_runners/episode_return_mean` and `learners/default_policy/policy_loss`, at
the training iteration as the step with the env steps sampled so far as the frames. With them
it keeps the algorithm's roles in the run's summary (`roles/<role>/...`: how many env runners
are healthy, the learners, a replay buffer's size, and the machines they run on), which the
experiment page shows beside the curves.

Ray is imported only when `run_callback` is called: the client works without it.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from platform_contracts.names import MAX_METRIC_NAME_LENGTH, METRIC_NAME

from platform_sdk.runs.run import Run, scalar_params

CONFIG_KEYS = ("lr", "gamma", "train_batch_size_per_learner", "minibatch_size", "num_epochs", "num_env_runners",
               "num_envs_per_env_runner", "num_learners", "rollout_fragment_length", "seed", "clip_param",
               "entropy_coeff", "vf_loss_coeff", "lambda_", "gym_env_vectorize_mode", "env")
_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9_.:/-]")
NOT_METRICS = frozenset({"config", "date", "hostname", "node_ip", "pid", "timestamp", "trial_id"})  # a result's


def metric_values(result: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    """The finite numbers of a nested result, as `a/b/c` names the runs API takes (the
    algorithm's config and the result's bookkeeping left out)."""
    for key, value in result.items():
        if not prefix and key in NOT_METRICS:
            continue
        name = f"{prefix}{_NOT_IN_NAMES.sub('_', str(key))}"
        if isinstance(value, Mapping):
            yield from metric_values(value, f"{name}/")
        elif isinstance(value, (bool, str)) or value is None:
            continue
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            name = name[:MAX_METRIC_NAME_LENGTH]
            if math.isfinite(number) and METRIC_NAME.fullmatch(name):
                yield name, number


def roles(algorithm: Any) -> dict[str, Any]:
    """The algorithm's roles now: env runners (healthy of all, and where), learners, replay."""
    out: dict[str, Any] = {}
    runners = getattr(algorithm, "env_runner_group", None)
    if runners is not None:
        remote = runners.num_remote_env_runners()
        out["roles/env_runners/count"] = remote or 1  # none remote: the algorithm's own local runner samples
        out["roles/env_runners/healthy"] = runners.num_healthy_remote_env_runners() if remote else 1
        out["roles/env_runners/nodes"] = ", ".join(sorted(set(_runner_nodes(runners, remote))))
    learners = getattr(algorithm, "learner_group", None)
    if learners is not None:
        out["roles/learners/count"] = 1 if learners.is_local else len(learners._workers or [])
        out["roles/learners/local"] = bool(learners.is_local)
    replay = getattr(algorithm, "local_replay_buffer", None)
    if replay is not None:
        out["roles/replay/size"] = int(len(replay)) if hasattr(replay, "__len__") else None
    return out


def _node() -> str:
    """The Ray node this runs on: its id's first 12 hex digits (two nodes of one host share an IP)."""
    import ray

    return str(ray.get_runtime_context().get_node_id())[:12]


def _runner_nodes(runners: Any, remote: int) -> Iterable[str]:
    if not remote:
        return [_node()]
    try:
        return [str(node) for node in runners.foreach_env_runner(lambda runner: _node(), local_env_runner=False)]
    except Exception:  # noqa: BLE001 - a runner being replaced has no answer: the count says it
        return []


def config_params(algorithm: Any) -> dict[str, Any]:
    config = algorithm.config
    params = {"algorithm": type(algorithm).__name__}
    for key in CONFIG_KEYS:
        value = getattr(config, key, None)
        if value is not None and not callable(value):
            params[key] = value
    return scalar_params(params)


def run_callback(name: str = "rllib", *, group: str | None = None, seed: int | None = None,
                 tags: Iterable[str] = (), hparams: Mapping[str, Any] | None = None, run_id: str | None = None,
                 url: str | None = None, token: str | None = None) -> type:
    """An RLlib callback class recording the algorithm's results into the run `name` (options as
    `Run`'s; `hparams` are added to the config's own)."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    run_id = run_id or f"run-{uuid.uuid4().hex}"  # one id for the driver and every env runner
    settings: dict[str, Any] = {"group": group, "seed": seed, "tags": list(tags), "run_id": run_id, "url": url,
                                "token": token}
    extra = dict(hparams or {})

    class RunCallback(RLlibCallback):  # type: ignore[misc]
        """Records RLlib's results into a platform run (platform_sdk.runs.rllib)."""

        run: Run | None = None
        run_id = settings["run_id"]

        def on_environment_created(self, *, env_runner: Any, metrics_logger: Any = None, env: Any = None,
                                   env_context: Any = None, **kwargs: Any) -> None:
            session_id = getattr(getattr(env, "unwrapped", env), "session_id", None)
            if session_id:
                handle = Run(name, **settings)
                handle.update(session_ids=[session_id])
                handle.close(timeout=10.0)

        def on_algorithm_init(self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
            self.run = Run(name, hparams={**config_params(algorithm), **extra}, **settings)
            self.run.update(summary=roles(algorithm))

        def on_train_result(self, *, algorithm: Any, metrics_logger: Any = None, result: dict[str, Any],
                            **kwargs: Any) -> None:
            if self.run is None:
                return
            step = int(result.get("training_iteration", 0))
            frames = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime") \
                or result.get("num_env_steps_sampled_lifetime")
            self.run.log(dict(metric_values(result)), step=step,
                         frames=int(frames) if isinstance(frames, (int, float)) and frames >= 0 else None)
            self.run.update(summary=roles(algorithm))

    return RunCallback
