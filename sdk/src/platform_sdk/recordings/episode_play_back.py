"""`play_back`: a recorded episode played again in a new session of its environment, step by
step compared with the recording.

    from platform_sdk.recordings import play_back

    result = play_back("s-1a2b3c4d5e6f", 0)
    print(result.matches, result.first_divergent_step)
    for step in result.steps:            # step 0 is the reset
        print(step.index, step.recorded_reward, step.played_reward, step.observation_match)

The new session is made of the recording's environment and kwargs (meta.json's), reset with the
episode's recorded seed and options, and given the recorded actions one by one. Each step's
reward is compared exactly with the recorded one (NaN equals NaN), its terminated and truncated
flags with the recorded ones, and its observation's digest
(`platform_contracts.digests.observation_digest`) with the recorded row's
(`GET /v0/recordings/{id}/episodes/{n}/digests`). A deterministic environment matches on every
step; otherwise `first_divergent_step` names the first step that did not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import gymnasium as gym
import numpy as np
from platform_contracts.digests import observation_digest

from platform_sdk import errors
from platform_sdk.client.rest import RestClient
from platform_sdk.client.settings import resolve_token, resolve_url
from platform_sdk.recordings.errors import PlayBackError, RecordingNotFoundError

ACTIONS = "actions"
_STEP_ARRAYS = ("rewards", "terminated", "truncated")


@dataclass(frozen=True)
class PlayedStep:
    """One step of a play back: index 0 is the reset (its observation only), index i the i-th
    recorded action's outcome (observation row i of the episode).

    Attributes:
        recorded_reward, played_reward: None for the reset.
        reward_match: the two rewards are equal (NaN equals NaN); True for the reset.
        observation_match: the observations' digests are equal; None when the recording gave
            no digest for the row.
        flags_match: terminated and truncated are the recorded ones (True for the reset).
    """

    index: int
    recorded_reward: float | None
    played_reward: float | None
    reward_match: bool
    observation_match: bool | None
    flags_match: bool = True

    @property
    def match(self) -> bool:
        """The step matched the recording (an observation without a digest is not held against it)."""
        return self.reward_match and self.flags_match and self.observation_match is not False


@dataclass(frozen=True)
class PlayBack:
    """The outcome of `play_back`.

    Attributes:
        steps: the reset (index 0), then one `PlayedStep` per recorded action played; fewer
            than the recording's when the played episode ended early (that step is divergent).
        matches: every step matched and every recorded action was played.
        first_divergent_step: the index of the first step that did not match, or None.
        seed, reset_options: what the new session was reset with (the episode's).
        session_id: the session the episode was played in (closed afterwards).
    """

    recording_id: str
    episode: int
    seed: int | None
    reset_options: dict[str, Any] | None
    session_id: str
    steps: list[PlayedStep] = field(default_factory=list)
    matches: bool = False
    first_divergent_step: int | None = None


def play_back(recording_id: str, episode: int, *, url: str | None = None, token: str | None = None) -> PlayBack:
    """Play episode `episode` of recording `recording_id` again and compare it step by step.

    Args:
        url: the platform; default `PLATFORM_URL`, then http://127.0.0.1:8000.
        token: API token; default `PLATFORM_TOKEN`.

    Raises:
        RecordingNotFoundError: no such recording or finished episode.
        PlayBackError: the episode cannot be played back (it began from a snapshot restore or in
            the middle of an episode, its arrays could not be built, its kwargs were not JSON).
        PlatformError: the platform refused something else (e.g. the new session).
    """
    from platform_sdk.client.remote_env import connect

    base = resolve_url(url)
    rest = RestClient(base, resolve_token(token))
    try:
        meta, entry, arrays, digests = _recorded(rest, recording_id, episode)
    finally:
        rest.close()
    seed, options = entry.get("seed"), entry.get("reset_options")
    with connect(str(meta["env_id"]), url=base, kwargs=dict(meta.get("kwargs") or {}), token=token) as env:
        actions = _actions(arrays, env.action_space, recording_id, episode)
        observation, _ = env.reset(seed=seed, options=options)
        steps = [PlayedStep(0, None, None, True, _same(observation, digests, 0))]
        rewards = arrays["rewards"]
        terminated, truncated = arrays["terminated"], arrays["truncated"]
        for i, action in enumerate(actions, start=1):
            observation, reward, ended, cut, _ = env.step(action)
            recorded = float(rewards[i - 1])
            flags = bool(ended) == bool(terminated[i - 1]) and bool(cut) == bool(truncated[i - 1])
            steps.append(PlayedStep(i, recorded, float(reward), _same_reward(recorded, float(reward)),
                                    _same(observation, digests, i), flags))
            if (ended or cut) and i < len(actions):
                break  # the played episode is over before the recorded one: nothing more to play
        session_id = str(env.session_id)
    divergent = next((s.index for s in steps if not s.match), None)
    return PlayBack(recording_id, episode, seed, options, session_id, steps,
                    matches=divergent is None and len(steps) == len(actions) + 1, first_divergent_step=divergent)


def _recorded(rest: RestClient, recording_id: str, episode: int) -> tuple[dict[str, Any], dict[str, Any],
                                                                           dict[str, np.ndarray], list[str] | None]:
    """(meta.json, the episode's entry, its action and step arrays, its observation digests or None)."""
    where = f"recording {recording_id!r} episode {episode}"
    path = f"/v0/recordings/{quote(recording_id, safe='')}"
    try:
        meta = rest.request("GET", path)
        listed = [e for e in meta.get("episodes") or [] if isinstance(e, dict) and e.get("index") == episode]
        if not listed:
            count = len(meta.get("episodes") or [])
            raise RecordingNotFoundError(f"{where}: the recording has no finished episode {episode} "
                                         f"({count} listed)", status=404)
        entry = listed[0]
        _check_playable(entry, meta, where)
        names = rest.request("GET", f"{path}/episodes/{episode}")["array_names"]
        wanted = [n for n in names if n == ACTIONS or n.startswith(ACTIONS + ".")] + list(_STEP_ARRAYS)
        reply = rest.request("GET", f"{path}/episodes/{episode}?arrays={quote(','.join(wanted), safe=',')}")
    except errors.SessionNotFoundError as exc:  # the gateway's 404 for a recording or an episode
        raise RecordingNotFoundError(f"{where}: {exc}", status=404) from None
    arrays = {name: _array(body) for name, body in reply["arrays"].items()}
    try:
        digests: list[str] | None = list(rest.request("GET", f"{path}/episodes/{episode}/digests")["observations"])
    except errors.SessionNotFoundError:
        digests = None  # an episode without observation arrays: rewards and flags are still compared
    return meta, entry, arrays, digests


def _check_playable(entry: dict[str, Any], meta: dict[str, Any], where: str) -> None:
    start = entry.get("start")
    if start == "restore":
        raise PlayBackError(f"{where} began from a snapshot restore, which a play back cannot repeat")
    if start == "none":
        raise PlayBackError(f"{where} began without a reset (it continues an earlier file's episode, or "
                            "followed a crash): there is no reset to repeat")
    if entry.get("file") is None:
        raise PlayBackError(f"{where}: its arrays could not be built ({entry.get('error', 'no file')})")
    if "_unparsed" in (meta.get("kwargs") or {}):
        raise PlayBackError(f"{where}: the recording's kwargs were not JSON, so the same environment cannot be made")


def _array(body: dict[str, Any]) -> np.ndarray:
    """An array of the episode's JSON answer, exactly (non-finite floats come as "nan"/"inf")."""
    dtype, shape = np.dtype(body["dtype"]), tuple(body["shape"])
    return np.array(body["data"], dtype=dtype).reshape(shape)


def _actions(arrays: dict[str, np.ndarray], space: gym.Space[Any], recording_id: str, episode: int) -> list[Any]:
    """The recorded actions for `space`: `actions` rows, or Dict / Tuple actions rebuilt from
    their `actions.<path>` arrays."""
    count = len(arrays["rewards"])

    def build(sub: gym.Space[Any], name: str, row: int) -> Any:
        if isinstance(sub, gym.spaces.Dict):
            return {key: build(part, f"{name}.{key}", row) for key, part in sub.spaces.items()}
        if isinstance(sub, gym.spaces.Tuple):
            return tuple(build(part, f"{name}.{i}", row) for i, part in enumerate(sub.spaces))
        if name not in arrays:
            raise PlayBackError(f"recording {recording_id!r} episode {episode} has no array {name!r} for the "
                                f"action space {sub}; it has {sorted(arrays)}")
        value = arrays[name][row]
        return int(value) if isinstance(sub, gym.spaces.Discrete) else np.asarray(value, dtype=sub.dtype)

    return [build(space, ACTIONS, row) for row in range(count)]


def _same(observation: Any, digests: list[str] | None, row: int) -> bool | None:
    if digests is None or row >= len(digests):
        return None
    return observation_digest(observation) == digests[row]


def _same_reward(recorded: float, played: float) -> bool:
    return recorded == played or (math.isnan(recorded) and math.isnan(played))
