"""RLlib's PPO on the platform's CartPole by its Gymnasium id, one batched session per env runner,
its results recorded into a platform run: what docs/training.md gives, run by
tests/test_e2e_rllib.py in a virtual environment of Ray RLlib and the served client wheel.

Usage: python rllib_ppo.py RUN_NAME ITERATIONS ENV_RUNNERS ENVS_PER_RUNNER [RAY_ADDRESS]
RLLIB_CPUS_PER_ENV_RUNNER (default 0.5): the CPUs each env runner asks Ray for (1 on nodes of one
CPU each spreads the runners over the nodes).
Prints one JSON line per iteration: {"iteration", "episode_return_mean", "env_steps"}.
"""

import json
import os
import sys

import ray
from ray.rllib.algorithms.ppo import PPOConfig

from platform_sdk.runs.rllib import run_callback

name, iterations, runners, envs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
address = sys.argv[5] if len(sys.argv) > 5 else None
if address:
    ray.init(address=address, log_to_driver=False)
else:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

config = (
    PPOConfig()
    .environment("platform_sdk.gym_ids:simulusion/cartpole")
    .env_runners(num_env_runners=runners, num_envs_per_env_runner=envs, gym_env_vectorize_mode="vector_entry_point",
                 rollout_fragment_length=128, num_cpus_per_env_runner=float(os.environ.get("RLLIB_CPUS_PER_ENV_RUNNER", "0.5")))
    .training(train_batch_size_per_learner=128 * envs * max(runners, 1), minibatch_size=128, num_epochs=2)
    .debugging(seed=0)
    .callbacks(run_callback(name, tags=["rllib"]))
)
algo = config.build_algo()
for _ in range(iterations):
    result = algo.train()
    runner_results = result["env_runners"]
    print(json.dumps({"iteration": result["training_iteration"],
                      "episode_return_mean": runner_results.get("episode_return_mean"),
                      "env_steps": runner_results.get("num_env_steps_sampled_lifetime")}), flush=True)
algo.stop()
ray.shutdown()
