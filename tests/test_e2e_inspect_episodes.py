"""`platform_sdk/episodes` (the platform's environments as Inspect tasks) run by Inspect against
the whole platform, with the scripted model `scripted_agent` of platform_testing (registered
through its `inspect_ai` entry point, so no model service is needed): returns that are the steps
taken on CartPole, each sample's recorded session (its id in the sample, the recording behind the
platform's API), invalid answers said back, counted and replaced by the default action, frames
shown to the model, and the task resolved by the `inspect` command line."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool, ChatMessageUser, ContentImage
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for

TASK = "platform_sdk/episodes"
JPEG_DATA_URI = "data:image/jpeg;base64,"


def run_task(url: str, log_dir: Path, script: str, **task_args: Any) -> EvalLog:
    logs = inspect_eval(TASK, model=f"scripted_agent/{script}", log_dir=str(log_dir), display="none",
                        task_args={"env": "cartpole", "url": url, **task_args})
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    return logs[0]


def outcome(sample: EvalSample) -> dict[str, Any]:
    """The sample's EpisodeOutcome, from its store."""
    prefix = "EpisodeOutcome:"
    return {key.removeprefix(prefix): value for key, value in sample.store.items() if key.startswith(prefix)}


def metrics(log: EvalLog, scorer: str) -> dict[str, float]:
    assert log.results is not None
    score = next(s for s in log.results.scores if s.name == scorer)
    return {name: metric.value for name, metric in score.metrics.items()}


def closed_recording(http: httpx.Client, session_id: str) -> dict[str, Any]:
    found: dict[str, Any] = wait_for(
        lambda: (m := http.get(f"/v0/recordings/{session_id}").json()).get("status") == "closed" and m,
        timeout=60, what=f"recording {session_id} closed")
    return found


def recorded_array(http: httpx.Client, session_id: str, name: str) -> list[Any]:
    answer = http.get(f"/v0/recordings/{session_id}/episodes/0/arrays/{name}")
    assert answer.status_code == 200, answer.text
    data: list[Any] = answer.json()["data"]
    return data


def test_two_cartpole_episodes_are_scored_and_recorded(platform_stack, tmp_path):
    log = run_task(platform_stack.url, tmp_path, "balance", episodes=2, seed=5, max_steps=15)
    samples = {sample.id: sample for sample in log.samples or []}
    assert sorted(samples) == ["seed-5", "seed-6"]
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    for sample_id, sample in samples.items():
        played = outcome(sample)
        assert played["seed"] == int(sample_id.removeprefix("seed-")) == sample.metadata["seed"]
        assert played["steps"] == 15 and played["stopped_at_max_steps"], played
        assert sample.scores is not None
        assert sample.scores["episode_return"].value == played["episode_return"] == played["steps"]
        assert sample.scores["episode_steps"].value == played["steps"]
        assert "episode_success" not in sample.scores  # CartPole reports no success
        assert played["invalid_actions"] == played["default_actions"] == 0
        assert played["model_calls"] == played["decisions"] == 15

        session_id = sample.metadata["session_id"]
        assert session_id == played["session_id"] == played["recording_id"]
        assert sample.metadata["replay"] == f"{platform_stack.url}/recordings/{session_id}"
        assert session_id in (sample.scores["episode_return"].explanation or "")
        recording = closed_recording(http, session_id)
        assert recording["env_id"] == "cartpole" and recording["episodes"][0]["seed"] == played["seed"]
        rewards = recorded_array(http, session_id, "rewards")
        assert len(rewards) == played["steps"] and sum(rewards) == sample.scores["episode_return"].value
        # the model's actions are the ones recorded: its tool calls, in order
        called = [call.arguments["action"] for message in sample.messages
                  for call in getattr(message, "tool_calls", None) or []]
        assert recorded_array(http, session_id, "actions") == called
        assert recorded_array(http, session_id, "agent.invalid") == [0] * 15
    returns = [sample.scores["episode_return"].value for sample in samples.values() if sample.scores]
    assert metrics(log, "episode_return") == {"mean": sum(returns) / 2, "stderr": 0.0}
    assert {score.name for score in log.results.scores} == {"episode_return", "episode_steps"}


def test_invalid_actions_are_said_back_and_counted(platform_stack, tmp_path):
    log = run_task(platform_stack.url, tmp_path, "first-invalid", episodes=1, max_steps=6)
    [sample] = log.samples or []
    played = outcome(sample)
    assert played["decisions"] == played["steps"] == 6
    assert played["invalid_actions"] == 6 and played["default_actions"] == 0 and played["model_calls"] == 12
    errors = [m for m in sample.messages if isinstance(m, ChatMessageTool) and m.error is not None]
    assert len(errors) == 6 and all("7 is not a valid action: expected one integer from 0 to 1" in m.text
                                    for m in errors), [m.text for m in errors]
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    closed_recording(http, played["session_id"])
    assert recorded_array(http, played["session_id"], "agent.invalid") == [1] * 6


def test_a_model_that_never_acts_gets_the_default_action_and_sees_frames(platform_stack, tmp_path):
    log = run_task(platform_stack.url, tmp_path, "no-tool", episodes=1, max_steps=50, invalid_tries=2,
                   frames="on")
    [sample] = log.samples or []
    played = outcome(sample)
    # pushing left (the default action, 0) every step, the pole falls long before max_steps
    assert played["terminated"] and not played["stopped_at_max_steps"] and played["steps"] < 50
    assert played["default_actions"] == played["decisions"] == played["steps"]
    assert played["model_calls"] == played["invalid_actions"] == 2 * played["steps"]
    assert sample.scores is not None and sample.scores["episode_return"].value == played["steps"]
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    closed_recording(http, played["session_id"])
    assert recorded_array(http, played["session_id"], "actions") == [0] * played["steps"]
    assert recorded_array(http, played["session_id"], "agent.default_action") == [1] * played["steps"]
    # each model call shows the current observation's frame (a JPEG), and only that one
    assert played["frames_shown"] == played["steps"]
    shown: list[bytes] = []
    for event in resolve_sample_attachments(sample).events:
        if event.event == "model":
            images = [part.image for message in event.input if isinstance(message, ChatMessageUser)
                      and isinstance(message.content, list) for part in message.content
                      if isinstance(part, ContentImage)]
            assert len(images) == 1 and images[0].startswith(JPEG_DATA_URI), images[0][:40]
            shown.append(base64.b64decode(images[0].removeprefix(JPEG_DATA_URI)))
    assert len(shown) == played["model_calls"] and all(jpeg[:2] == b"\xff\xd8" for jpeg in shown)
    assert len(set(shown)) > 1  # the frames follow the episode


def test_a_robot_with_world_changes_labelled_observations_and_success(platform_stack, tmp_path):
    """The Panda's reach: its observation written by its labels, its Box action described with
    bounds, the timeline's change met at its step, and success scored (the task reports it)."""
    timeline = [{"at": 3, "change": "mass", "body": "hand", "scale": 2.0, "reveal": True}]
    log = run_task(platform_stack.url, tmp_path, "no-tool", env="menagerie-franka-emika-panda-reach",
                   kwargs={"substeps": 100}, world_changes=timeline, episodes=1, max_steps=5, invalid_tries=1)
    [sample] = log.samples or []
    played = outcome(sample)
    assert played["steps"] == played["default_actions"] == 5 and played["stopped_at_max_steps"]
    assert [(c["index"], c["session_step"]) for c in played["world_changes_applied"]] == [(0, 3)]
    rules = sample.messages[0].text
    assert "The world may change during the episode" in rules and "a list of" in rules and "within [" in rules
    first = next(m.text for m in sample.messages if m.text.startswith("Step 0. Observation:"))
    parts = first.splitlines()[1:]
    assert len(parts) > 1 and all(re.fullmatch(r"[\w.]+: \[[^\]]*\]", line) for line in parts), first
    assert sample.scores is not None and played["success"] is not None
    assert sample.scores["episode_success"].value == float(played["success"])
    assert metrics(log, "episode_success") == {"mean": float(played["success"]), "stderr": 0.0}
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    recording = closed_recording(http, played["session_id"])
    assert recording["env_id"] == "menagerie-franka-emika-panda-reach"


def test_the_inspect_command_resolves_the_task(platform_stack, tmp_path):
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run(
        [str(inspect), "eval", TASK, "--model", "scripted_agent/balance", "-T", "env=cartpole", "-T", "episodes=3",
         "-T", "max_steps=4", "--limit", "1", "--log-dir", str(tmp_path), "--display", "none"],
        env={**clean_env(), "PLATFORM_URL": platform_stack.url}, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.task == TASK
    [sample] = log.samples or []
    assert sample.id == "seed-0" and outcome(sample)["steps"] == 4
    assert httpx.get(f"{platform_stack.url}/v0/recordings/{sample.metadata['session_id']}").status_code == 200


@pytest.mark.parametrize("argument", [{"frames": "sometimes"}, {"max_steps": 0}, {"episodes": 0}])
def test_bad_task_arguments_are_refused_before_any_episode(platform_stack, tmp_path, argument):
    [(name, value)] = argument.items()
    with pytest.raises(ValueError, match=f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}"):
        inspect_eval(TASK, model="scripted_agent/balance", log_dir=str(tmp_path), display="none",
                     task_args={"env": "cartpole", "url": platform_stack.url, **argument})
    assert not list(tmp_path.glob("*.eval"))


def test_an_unknown_environment_fails_its_samples_saying_so(platform_stack, tmp_path):
    logs = inspect_eval(TASK, model="scripted_agent/balance", log_dir=str(tmp_path), display="none",
                        task_args={"env": "no-such-env", "url": platform_stack.url, "episodes": 1})
    assert logs[0].status == "error" and logs[0].error is not None
    assert "no-such-env" in logs[0].error.message, logs[0].error.message
