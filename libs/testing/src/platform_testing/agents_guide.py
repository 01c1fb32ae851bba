"""The agents guide's own example (../shared/spec/agents-guide.md), verbatim, for the tests that
follow the guide step by step: its `my_agent.py`."""

from __future__ import annotations

MY_AGENT = """\
# my_agent.py
class MyAgent:
    def __init__(self, seed=0):
        self.seed = seed

    def start(self, env, streams):
        self.space = env.action_space
        self.space.seed(self.seed)

    def act(self, observations, rewards, terminated, truncated, infos):
        return [self.space.sample() for _ in observations]


def make(**settings):
    return MyAgent(**settings)
"""
