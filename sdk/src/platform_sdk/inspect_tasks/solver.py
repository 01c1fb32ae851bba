"""The solver: each sample's episode played by the task's model (episode.EpisodePlayer), its
outcome in the sample's store and metadata (session, recording and replay link)."""

from __future__ import annotations

from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from platform_sdk.inspect_tasks.episode import EpisodePlayer
from platform_sdk.inspect_tasks.frames import shows_frames
from platform_sdk.inspect_tasks.observation_text import number_text
from platform_sdk.inspect_tasks.outcome import EpisodeOutcome
from platform_sdk.inspect_tasks.scorers import SUCCESS, success_score
from platform_sdk.inspect_tasks.settings import EpisodeSettings

LINK_FIELDS = ("session_id", "recording_id", "replay")


def summary_text(outcome: EpisodeOutcome) -> str:
    ended = ("terminated" if outcome.terminated else "truncated" if outcome.truncated
             else "stopped at max_steps" if outcome.stopped_at_max_steps else "not finished")
    success = "" if outcome.success is None else f", success {'yes' if outcome.success else 'no'}"
    return f"{outcome.steps} steps, return {number_text(outcome.episode_return)}, {ended}{success}"


@solver
def play_episode(settings: EpisodeSettings) -> Solver:
    """Play the sample's episode (its metadata's `seed`) with the model under evaluation."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        outcome = state.store_as(EpisodeOutcome)
        player = EpisodePlayer(settings, model, outcome, shows_frames(settings.frames, str(model)))
        try:
            await player.play(int(state.metadata["seed"]), state.messages)
        finally:
            state.metadata.update({name: getattr(outcome, name) for name in LINK_FIELDS})
        state.output = ModelOutput.from_content(model=str(model), content=summary_text(outcome))
        if (success := success_score(outcome)) is not None:
            state.scores = {**(state.scores or {}), SUCCESS: success}
        return state

    return solve
