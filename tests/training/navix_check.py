"""The optional check of `platform_sdk.runs.log_navix` against navix itself (navix 4.0 needs
Python 3.12, the workspace is 3.11, so this is not part of make test): a real PPO
`Experiment.run` on Navix-Empty-5x5 with two seeds, recorded with `log_navix`, then every stored
series compared with navix's own `derive_episodic_metrics`.

    uv venv -p 3.12 /tmp/nx && uv pip install -p /tmp/nx/bin/python navix==4.0.0 libs/contracts sdk
    PLATFORM_URL=http://127.0.0.1:8000 /tmp/nx/bin/python tests/training/navix_check.py
"""

import os

import httpx
import navix as nx
import numpy as np
from navix.agents.agent import derive_episodic_metrics
from navix.agents.ppo import PPO, PPOHparams
from navix.agents.models import ActorCritic, ConvEncoder
from navix.experiment import Experiment
from platform_sdk.runs import log_navix

env = nx.make("Navix-Empty-5x5-v0", observation_fn=nx.observations.symbolic_first_person)
hparams = PPOHparams(budget=4 * 32 * 6, num_envs=4, num_steps=32)
network = ActorCritic(action_dim=len(env.action_set), actor_encoder=ConvEncoder(), critic_encoder=ConvEncoder())
agent = PPO(hparams=hparams, network=network, env=env)
experiment = Experiment(name="navix-check", agent=agent, env=env, env_id="Navix-Empty-5x5-v0", seeds=(0, 1))
_, logs = experiment.run(log_to_wandb=False)
print({k: getattr(v, "shape", None) for k, v in logs.items() if k.startswith(("agent/train", "experiment"))})
runs = log_navix(logs, agent.hparams, name="navix-check", seeds=experiment.seeds, tags=["navix-check"])
print([r.id for r in runs])

theirs = derive_episodic_metrics(logs)
url = os.environ.get("PLATFORM_URL", "http://127.0.0.1:8000")
for index, run in enumerate(runs):
    series = httpx.get(f"{url}/v0/runs/{run.id}/metrics").json()["series"]
    frames = np.asarray(logs["agent/train/frames"][index]).tolist()
    for name in ("agent/episode/returns", "agent/episode/length", "agent/episode/success_rate",
                 "experiment/costs/fps", "experiment/costs/wall_time"):
        want = [(f, float(v)) for f, v in zip(frames, np.asarray(theirs[name][index]).tolist()) if np.isfinite(v)]
        got = list(zip(series[name]["step"], series[name]["value"])) if name in series else []
        assert [s for s, _ in got] == [f for f, _ in want], (name, got, want)
        assert np.allclose([v for _, v in got], [v for _, v in want], rtol=1e-6), (name, got, want)
    print("seed", index, "matches navix's derive_episodic_metrics:", {n: len(s["step"]) for n, s in series.items()})
