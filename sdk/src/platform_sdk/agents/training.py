"""The run command's training mode (ai_traineree's `EnvRunner.run`, on a platform session):

- every `--test-every`-th episode is a greedy test: the agent is told (`set_training(False)`),
  its epsilon is 0, and its steps are recorded with `agent.test_episode` = 1;
- training episodes get the `--epsilon` schedule's value at their count of training episodes
  (`set_epsilon(e)`);
- the run stops when the mean of the last `--window` test scores reaches `--reward-goal` (the
  window full), or after `--episodes`;
- every `--checkpoint-every` episodes the agent is saved (`--save PATH`) and the runner's state
  beside it (`PATH.runner.json`); `--resume` continues from there after a crash: the episode
  count, the test scores, the schedule, and the same training run;
- every episode's score and steps, the epsilon and the test scores with their window mean go
  into a training run (`platform_sdk.runs`), each at its episode number, with the environment
  steps so far as its frames.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from platform_sdk.agents.loop import AgentLoop, EpisodeRecord
from platform_sdk.agents.schedules import Schedule, schedule_from_text
from platform_sdk.agents.summary import episode_line
from platform_sdk.runs.run import Run

TEST_EPISODE = "test_episode"  # recorded with each step as agent.test_episode: 1 in a greedy test
STATE_SUFFIX = ".runner.json"


def state_path(save: Path) -> Path:
    return save.with_name(save.name + STATE_SUFFIX)


@dataclass
class TrainingState:
    """What a checkpoint keeps of the runner (the agent keeps its own)."""

    episodes: int = 0  # played, training and test
    train_episodes: int = 0  # the epsilon schedule's time
    steps: int = 0  # environment steps
    scores: list[float] = field(default_factory=list)
    test_scores: list[float] = field(default_factory=list)
    goal_reached_at: int | None = None  # the episode whose test filled the window at the goal
    run_id: str | None = None

    def save(self, path: Path) -> None:
        """Written whole or not at all (a crash mid-write leaves the previous checkpoint)."""
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(asdict(self)))
        os.replace(partial, path)

    @classmethod
    def load(cls, path: Path) -> TrainingState:
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"{path} is not a runner checkpoint: {exc}") from None


class Training:
    """One training run of the run command: decides each episode's mode, tallies the tests, keeps
    the checkpoints and the training run."""

    def __init__(self, args: argparse.Namespace, agent: Any, state: TrainingState) -> None:
        self.args = args
        self.agent = agent
        self.state = state
        self.schedule: Schedule | None = schedule_from_text(args.epsilon) if args.epsilon else None
        self.window: deque[float] = deque(state.test_scores[-args.window:] if args.window else [],
                                          maxlen=args.window)
        self.run: Run | None = None
        self.testing = False
        self.epsilon: float | None = None

    @property
    def window_mean(self) -> float | None:
        return sum(self.window) / len(self.window) if self.window else None

    @property
    def goal_reached(self) -> bool:
        return self.state.goal_reached_at is not None

    def open_run(self, session_id: str, recording: bool) -> Run:
        args = self.args
        name = args.run or f"{args.agent} on {args.env}"
        hparams = {**(args.config or {}), "env": args.env, "test_every": args.test_every, "window": args.window,
                   "reward_goal": args.reward_goal, "epsilon": args.epsilon, "seed": args.seed}
        self.run = Run(name, run_id=self.state.run_id, seed=args.seed, hparams=hparams, tags=["platform-agent"],
                       session_ids=[session_id], recording_ids=[session_id] if recording else [],
                       url=args.url, token=args.token)
        self.state.run_id = self.run.id
        return self.run

    def begin_episode(self, loop: AgentLoop) -> None:
        """Set the agent up for the next episode (a test or a training one)."""
        number = self.state.episodes + 1
        self.testing = bool(self.args.test_every) and number % self.args.test_every == 0
        set_training = getattr(self.agent, "set_training", None)
        if callable(set_training):
            set_training(not self.testing)
        self.epsilon = None
        if self.schedule is not None:
            self.epsilon = 0.0 if self.testing else float(self.schedule.value(self.state.train_episodes))
            self.agent.set_epsilon(self.epsilon)
        loop.step_data = {TEST_EPISODE: 1 if self.testing else 0}

    def end_episode(self, record: EpisodeRecord) -> list[str]:
        """Tally an ended episode; the lines to print."""
        state = self.state
        state.episodes += 1
        state.steps += record.steps
        score = record.episode_return
        state.scores.append(score)
        values: dict[str, float] = {"episode/score": score, "episode/steps": record.steps}
        if self.epsilon is not None:
            values["episode/epsilon"] = self.epsilon
        line = episode_line(replace(record, episode=state.episodes))
        if self.testing:
            state.test_scores.append(score)
            self.window.append(score)
            mean = self.window_mean
            assert mean is not None
            values.update({"test/score": score, "test/avg_score": mean})
            line = line.replace(":", " (test):", 1) + f"; test mean {mean:g} over {len(self.window)}"
            goal = self.args.reward_goal
            if goal is not None and len(self.window) == self.args.window and mean >= goal and not self.goal_reached:
                state.goal_reached_at = state.episodes
        else:
            state.train_episodes += 1
        if self.run is not None:
            self.run.log(values, step=state.episodes, frames=state.steps)
        lines = [line]
        if state.goal_reached_at == state.episodes:
            lines.append(f"goal reached at episode {state.episodes}: test mean {self.window_mean:g} over the last "
                         f"{self.args.window} test episodes >= {self.args.reward_goal:g}")
        return lines

    def checkpoint_due(self) -> bool:
        every = self.args.checkpoint_every
        return bool(every) and self.state.episodes % every == 0

    def save_state(self) -> Path:
        """Write the runner's state once the run holds every episode logged so far, so a resume
        from this checkpoint has all of them in the run (if the platform is away, up to 30 s)."""
        if self.run is not None:
            self.run.flush(timeout=30.0)
        path = state_path(self.args.save)
        self.state.save(path)
        return path

    def summary(self) -> dict[str, Any]:
        """The summary's `training` part."""
        return {"episodes": self.state.episodes, "steps": self.state.steps, "test_episodes": len(self.state.test_scores),
                "test_mean": self.window_mean, "window": self.args.window, "reward_goal": self.args.reward_goal,
                "goal_reached_at": self.state.goal_reached_at,
                "run_id": self.run.id if self.run else None, "run": self.run.url if self.run else None}

    def close(self, ended: str) -> None:
        if self.run is None:
            return
        self.run.update(summary={"episodes": self.state.episodes, "steps": self.state.steps,
                                 "test_mean": self.window_mean, "goal_reached_at": self.state.goal_reached_at})
        self.run.finish("finished" if ended == "completed" else "failed")
