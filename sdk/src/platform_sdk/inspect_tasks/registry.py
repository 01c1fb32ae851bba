"""What Inspect loads through the `inspect_ai` entry point: importing a task registers it under
`platform_sdk/<name>`."""

from platform_sdk.inspect_tasks.scorers import episode_return, episode_steps
from platform_sdk.inspect_tasks.solver import play_episode
from platform_sdk.inspect_tasks.task import episodes

__all__ = ["episode_return", "episode_steps", "episodes", "play_episode"]
