"""The agent loop: one decision per stream, each stream's session stepped, episodes counted.

`AgentLoop` is the loop itself (the run and compare commands drive it step by step);
`run_episodes` is the loop for your own code: it yields one `EpisodeRecord` per finished
episode. Sessions may auto-reset or not (the loop resets those that do not, and puts
`final_obs` and `final_info` in the info either way), and endless sessions' restarts count as
finished episodes that were neither terminated nor truncated.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from platform_sdk.agents.interface import AgentError, max_streams, optional_method
from platform_sdk.agents.readout_names import COMPUTE_S, REFUSED, work_values

Outcome = tuple[Any, float, bool, bool, dict[str, Any]]


@dataclass(frozen=True)
class EpisodeRecord:
    """One finished episode of one stream."""

    episode: int  # 1, 2, ... in the order episodes finished, over all streams
    stream: int  # which of the sessions (0-based)
    session_id: str | None
    seed: int | None  # the seed of the reset that began it (None: not seeded)
    steps: int
    episode_return: float
    success: bool | None  # info["is_success"] of its last step; None when not reported
    terminated: bool
    truncated: bool  # the environment's time limit, or the loop's max_steps
    restarted: bool  # an endless session restarted in place (neither terminated nor truncated)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def episode_success(info: dict[str, Any]) -> bool | None:
    """`info["is_success"]` as a bool; None when the step did not report it."""
    value = info.get("is_success")
    return None if value is None else bool(value)


class AgentLoop:
    """Drives `agent` on `envs`, one session per stream.

    `start()` calls `agent.start(envs[0], len(envs))` and resets every session (stream i with
    the i-th seed; later resets take the seeds that are left, then none), or begins at
    `starts` ((observation, info) per stream, e.g. a resumed session's `env.resumed`).
    Each `step()` makes one decision per stream and returns the episodes that ended in it.
    `finish()` gives the agent the last outcomes, once, unless an `act` already saw them (a run
    stopped inside a step). `episodes` and `max_steps` (decisions per
    episode) bound the run; `done` says when the episodes are all there.
    """

    def __init__(
        self,
        agent: Any,
        envs: Sequence[Any],
        *,
        episodes: int | None = None,
        seeds: Iterable[int] | None = None,
        max_steps: int | None = None,
        starts: Sequence[tuple[Any, dict[str, Any]]] | None = None,
    ) -> None:
        if not envs:
            raise AgentError("the loop needs at least one session (one per stream)")
        limit = max_streams(agent)
        if len(envs) > limit:
            raise AgentError(f"{type(agent).__name__} drives at most {limit} stream(s) (its max_streams), "
                             f"got {len(envs)} sessions")
        if starts is not None and len(starts) != len(envs):
            raise AgentError(f"starts has {len(starts)} entries for {len(envs)} sessions")
        self.agent, self.envs, self.streams = agent, list(envs), len(envs)
        self.episodes_wanted, self.max_steps, self._starts = episodes, max_steps, starts
        self._seeds = iter(seeds) if seeds is not None else iter(())
        self._act = agent.act
        self._readouts = optional_method(agent, "readouts")
        self._takes_agent = [_step_takes_agent(env) and _records(env) for env in self.envs]
        # Platform sessions are stepped together by sending every step before waiting for any
        # answer; other environments from threads.
        self._pipelined = all(callable(getattr(env, "_begin_step", None)) for env in self.envs)
        threads = self.streams > 1 and not self._pipelined
        self._pool = ThreadPoolExecutor(self.streams, thread_name_prefix="agent-stream") if threads else None
        n = self.streams
        self.observations: list[Any] = [None] * n
        self.rewards: list[float | None] = [None] * n
        self.terminated, self.truncated = [False] * n, [False] * n
        self.infos: list[dict[str, Any]] = [{} for _ in range(n)]
        self.step_infos: list[dict[str, Any]] = [{} for _ in range(n)]  # each step's own info (final_info when it ended)
        self._final: list[tuple[Any, dict[str, Any]] | None] = [None] * n  # streams that ended in the last step
        self._episode_steps, self._episode_returns = [0] * n, [0.0] * n
        self._episode_seeds: list[int | None] = [None] * n
        self.finished: list[EpisodeRecord] = []
        self.iterations = self.decisions = self.refused = 0
        self.act_seconds = 0.0
        # settle_steps / wait_steps (readout_names.WORK_NAMES): this decision's, per stream, and
        # the totals and counts of the decisions that reported each
        self.step_work: list[dict[str, float]] = [{} for _ in range(n)]
        self.work_totals: dict[str, float] = {}
        self.work_reports: dict[str, int] = {}
        # recorded with every stream's step beside the agent's readouts (the run command's
        # training mode marks its greedy test episodes here: agent.test_episode)
        self.step_data: dict[str, Any] = {}
        self.started = False
        self._unreported = True  # the outcomes held now have been given to no act yet
        self._finish_called = False

    @property
    def done(self) -> bool:
        return self.episodes_wanted is not None and len(self.finished) >= self.episodes_wanted

    def start(self) -> None:
        self.agent.start(self.envs[0], self.streams)
        self.started = True
        for i, env in enumerate(self.envs):
            if self._starts is not None:
                self.observations[i], info = self._starts[i]
                self.infos[i] = dict(info)
            else:
                seed = next(self._seeds, None)
                self.observations[i], self.infos[i] = env.reset(seed=seed)
                self._episode_seeds[i] = seed

    def step(self) -> list[EpisodeRecord]:
        """One decision per stream; the episodes that ended in it (none once `done`)."""
        n = self.streams
        started = time.perf_counter()
        self._unreported = False
        actions = self._act(self.observations, self.rewards, self.terminated, self.truncated, self.infos)
        compute_s = (time.perf_counter() - started) / n
        self.act_seconds += compute_s * n
        if len(actions) != n:
            raise AgentError(f"{type(self.agent).__name__}.act returned {len(actions)} action(s) for {n} stream(s)")
        data = self._decision_data(compute_s)
        if n == 1:
            env = self.envs[0]
            results = [env.step(actions[0], agent=data[0]) if self._takes_agent[0] else env.step(actions[0])]
        elif self._pipelined:
            answers = [env._begin_step(action, agent=entry if takes else None)
                       for env, action, entry, takes in zip(self.envs, actions, data, self._takes_agent, strict=True)]
            results = [answer() for answer in answers]
        else:
            assert self._pool is not None
            results = list(self._pool.map(self._step_one, range(n), actions, data))
        self.iterations += 1
        self.decisions += n
        self._unreported = True  # from here on finish() owes them, even if taking them in is interrupted
        ended: list[EpisodeRecord] = []
        for i, (observation, reward, terminated, truncated, info) in enumerate(results):
            reward = float(reward)
            self._episode_steps[i] += 1
            self._episode_returns[i] += reward
            self.observations[i], self.rewards[i] = observation, reward
            self.terminated[i], self.truncated[i], self.infos[i] = bool(terminated), bool(truncated), info
            self.step_infos[i] = info
            self._final[i] = None
            record = self._episode_end(i, observation, info)
            if record is not None:
                ended.append(record)
        return ended

    def finish(self) -> None:
        """The agent's `finish` (when it has one) with the last outcomes; ended streams show their
        final observation and info, not the next episode's. Called once; nothing when an `act`
        already saw these outcomes (the run stopped inside a step)."""
        finish = optional_method(self.agent, "finish")
        if finish is None or not self.started or self._finish_called or not self._unreported:
            return
        self._finish_called = True
        observations, infos = list(self.observations), list(self.infos)
        for i, final in enumerate(self._final):
            if final is not None:
                observations[i], infos[i] = final
        finish(observations, list(self.rewards), list(self.terminated), list(self.truncated), infos)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- one stream ---------------------------------------------------------------------------
    def _step_one(self, i: int, action: Any, data: dict[str, Any]) -> Outcome:
        env = self.envs[i]
        result: Outcome = env.step(action, agent=data) if self._takes_agent[i] else env.step(action)
        return result

    def _decision_data(self, compute_s: float) -> list[dict[str, Any]]:
        """What is recorded with each stream's step: the agent's readouts, and compute_s unless
        the agent reports its own."""
        n = self.streams
        if self._readouts is None:
            return [{COMPUTE_S: compute_s, **self.step_data} for _ in range(n)]
        readouts = self._readouts()
        if not isinstance(readouts, list | tuple) or len(readouts) != n:
            raise AgentError(f"{type(self.agent).__name__}.readouts() must return a list of {n} dict(s), one per "
                             f"stream, got {type(readouts).__name__}"
                             f"{f' of {len(readouts)}' if isinstance(readouts, list | tuple) else ''}")
        data: list[dict[str, Any]] = []
        for i, values in enumerate(readouts):
            if not isinstance(values, dict):
                raise AgentError(f"{type(self.agent).__name__}.readouts() must return dicts, got {type(values).__name__}")
            entry = {**self.step_data, **values}
            entry.setdefault(COMPUTE_S, compute_s)
            if entry.get(REFUSED):
                self.refused += 1
            self.step_work[i] = work = work_values(entry)
            for name, value in work.items():
                self.work_totals[name] = self.work_totals.get(name, 0.0) + value
                self.work_reports[name] = self.work_reports.get(name, 0) + 1
            data.append(entry)
        return data

    def work_per_decision(self) -> dict[str, float]:
        """The mean of each work measure over the decisions that reported it (none: not in it)."""
        return {name: self.work_totals[name] / count for name, count in self.work_reports.items() if count}

    def _episode_end(self, i: int, observation: Any, info: dict[str, Any]) -> EpisodeRecord | None:
        """Records stream i's episode when this step ended it, and begins the next one when the
        session did not (a plain session, the loop's max_steps, a seed to use)."""
        restarted = bool(info.get("restarted"))
        auto = "final_obs" in info
        cut = not (auto or self.terminated[i] or self.truncated[i]) and self.max_steps is not None \
            and self._episode_steps[i] >= self.max_steps
        if not (auto or cut or self.terminated[i] or self.truncated[i]):
            return None
        final_obs, final_info = (info["final_obs"], info.get("final_info", {})) if auto else (observation, info)
        self.step_infos[i] = final_info
        if cut:
            self.truncated[i] = True
        record = EpisodeRecord(
            episode=len(self.finished) + 1, stream=i, session_id=getattr(self.envs[i], "session_id", None),
            seed=self._episode_seeds[i], steps=self._episode_steps[i], episode_return=self._episode_returns[i],
            success=episode_success(final_info), terminated=self.terminated[i], truncated=self.truncated[i],
            restarted=restarted and not cut)
        if self.done:
            return None  # the episodes wanted are all there: this one is not counted
        self.finished.append(record)
        self._episode_steps[i], self._episode_returns[i] = 0, 0.0
        self._final[i] = (final_obs, final_info)
        if self.done:
            return record  # the last one: the stream is not reset, finish() shows its end
        seed = next(self._seeds, None)
        if cut or not auto or seed is not None:
            observation, reset_info = self.envs[i].reset(seed=seed)
            self.observations[i] = observation
            self.infos[i] = {**reset_info, "final_obs": final_obs, "final_info": final_info}
        self._episode_seeds[i] = seed
        return record


def run_episodes(
    agent: Any,
    envs: Sequence[Any],
    episodes: int | None = None,
    seeds: Iterable[int] | None = None,
    *,
    max_steps: int | None = None,
) -> Iterator[EpisodeRecord]:
    """Drives `agent` on `envs` (one session per stream) and yields one record per finished
    episode, until `episodes` have finished (None: until you stop iterating).

    `seeds` seed the episodes in the order they begin (stream 0's first, stream 1's first,
    ..., then each next episode); once they run out, episodes are not seeded. `max_steps`
    ends an episode after that many decisions (truncated). The agent's `start` comes before
    the first decision and its `finish` after the last step (also when you stop iterating
    early); the sessions are left open: close them yourself (`with platform_sdk.connect(...)`).
    """
    loop = AgentLoop(agent, envs, episodes=episodes, seeds=seeds, max_steps=max_steps)
    try:
        loop.start()
        while not loop.done:
            yield from loop.step()
    except GeneratorExit:
        loop.finish()
        raise
    else:
        loop.finish()
    finally:
        loop.close()


def _records(env: Any) -> bool:
    """Whether the session records its steps (agent data is only kept in recordings, so an
    unrecorded session is not sent any); True when it does not say."""
    session = getattr(env, "session", None)
    return not isinstance(session, dict) or bool(session.get("record", True))


def _step_takes_agent(env: Any) -> bool:
    """Whether `env.step` takes `agent=` (platform sessions do; a local Gymnasium env does not)."""
    try:
        return "agent" in inspect.signature(env.step).parameters
    except (TypeError, ValueError):
        return False
