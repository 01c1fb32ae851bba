"""The episode's scores, read from its outcome (outcome.EpisodeOutcome): the return, success
(only for environments that report `is_success`) and steps; each names the recording."""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from platform_sdk.inspect_tasks.outcome import EpisodeOutcome

SUCCESS = "episode_success"


def _links(outcome: EpisodeOutcome) -> dict[str, object]:
    return {"session_id": outcome.session_id, "recording_id": outcome.recording_id, "replay": outcome.replay}


@scorer(metrics=[mean(), stderr()])
def episode_return() -> Scorer:
    """The episode's total reward."""

    async def score(state: TaskState, target: Target) -> Score:
        outcome = state.store_as(EpisodeOutcome)
        return Score(value=outcome.episode_return, answer=state.output.completion,
                     explanation=f"{state.output.completion}; {outcome.link_text()}",
                     metadata={**_links(outcome), "invalid_actions": outcome.invalid_actions,
                               "default_actions": outcome.default_actions, "model_calls": outcome.model_calls})

    return score


def success_score(outcome: EpisodeOutcome) -> Score | None:
    """1 when the environment said the episode succeeded (`is_success` in its last info), 0 when
    it said it did not; None when it says nothing of success (CartPole, most tasks).

    Not a scorer: the solver puts it in the sample's scores (as SUCCESS) only when there is one,
    so an environment without success has no success score at all, rather than one with no
    samples (Inspect gives every scorer of a task a result, NaN when no sample was scored)."""
    if outcome.success is None:
        return None
    return Score(value=float(outcome.success), explanation=outcome.link_text(), metadata=_links(outcome))


@scorer(metrics=[mean(), stderr()])
def episode_steps() -> Scorer:
    """The steps the episode lasted."""

    async def score(state: TaskState, target: Target) -> Score:
        outcome = state.store_as(EpisodeOutcome)
        return Score(value=outcome.steps, explanation=outcome.link_text(), metadata=_links(outcome))

    return score
