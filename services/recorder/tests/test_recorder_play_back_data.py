"""What a play back of a recorded episode needs from the real recorder: each episode's reset seed
and options in meta.json, the recordings' step counts and total returns, recording.json's world
changes with the recording, and the digests of the observations (the same as the live ones)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from platform_contracts import subjects
from platform_contracts.digests import observation_digest
from platform_contracts.values import datamap_from_dict, tensor_from_array
from recorder_testkit import ask as ask_recorder
from recorder_testkit import (
    closed,
    dict_obs,
    dict_spec,
    episode_events,
    publish,
    read_meta,
    reset_event,
    started,
    step_event,
    wait_drained,
    wait_for,
)
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


async def ask(nc: Any, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    return await ask_recorder(nc, subject, body, timeout=10)


def _seeded(event: events_pb2.StepEvent, seed: int | None, options: dict[str, Any] | None) -> events_pb2.StepEvent:
    if seed is not None:
        event.reset_seed = seed
    if options is not None:
        event.reset_options.CopyFrom(datamap_from_dict(options))
    return event


async def _closed_recording(js: Any, root: Path, sid: str, events: list[events_pb2.StepEvent], episodes: int,
                            **started_kwargs: Any) -> None:
    await publish(js, started(sid, **started_kwargs))
    for event in events:
        await publish(js, event)
    await publish(js, closed(sid, last_seq=max(e.seq for e in events)))
    await wait_drained(js)
    await wait_for(lambda: (m := read_meta(root, sid)) and m.status == "closed" and len(m.episodes) == episodes,
                   what=f"{sid} closed with {episodes} episodes")


async def test_episodes_keep_their_reset_seed_and_options_and_summaries_count_steps_and_returns(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    nc, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-seeds"
    first = episode_events(sid, 1, 0, 3)  # rewards 1, 2, 3
    _seeded(first[0], 0, {"level": 2, "mode": "hard"})
    second = episode_events(sid, 5, 1, 2)  # rewards 1, 2; a reset without seed or options
    restored = [reset_event(sid, 8, 2, restore=True), step_event(sid, 9, 2, 1, reward=0.5, terminated=True)]
    await _closed_recording(js, root, sid, first + second + restored, episodes=3)

    meta = (await ask(nc, subjects.RECORDER_GET_RECORDING, {"id": sid}))["recording"]
    entries = meta["episodes"]
    assert [(e["seed"], e["reset_options"]) for e in entries] == [
        (0, {"level": 2, "mode": "hard"}), (None, None), (None, None)]
    assert meta["world_changes"] == []
    assert meta["spec"] == json.loads((root / sid / "recording.json").read_text())["spec"]

    [summary] = [r for r in (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}))["recordings"]
                 if r["session_id"] == sid]
    assert (summary["episode_count"], summary["step_count"], summary["total_return"]) == (3, 6, 9.5)

    empty = f"{unique_prefix}-empty"
    await publish(js, started(empty))
    await publish(js, closed(empty))
    await wait_drained(js)
    await wait_for(lambda: (m := read_meta(root, empty)) and m.status == "closed", what="the empty recording closed")
    [none] = [r for r in (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}))["recordings"]
              if r["session_id"] == empty]
    assert (none["episode_count"], none["step_count"], none["total_return"]) == (0, 0, None)

    # recording.json's world changes come with the recording (none are recorded yet: hand-written here).
    info_path = root / sid / "recording.json"
    info = json.loads(info_path.read_text())
    info["world_changes"] = [{"seq": 3, "what": "a block moved"}]
    info_path.write_text(json.dumps(info))
    again = (await ask(nc, subjects.RECORDER_GET_RECORDING, {"id": sid}))["recording"]
    assert again["world_changes"] == [{"seq": 3, "what": "a block moved"}]


def _image_obs(seq: int) -> pb.Value:
    """A 64 x 48 RGB screen (large rows: the recorder streams them) that differs by seq."""
    rng = np.random.default_rng(seq)
    return pb.Value(tensor=tensor_from_array(rng.integers(0, 256, (64, 48, 3), dtype=np.uint8)))


async def test_digests_of_recorded_observations_are_those_of_the_live_values(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    nc, js = recorder_js
    root = tmp_path / "recordings"
    cases = {
        "box": (None, episode_events, {}),
        "dict": (dict_spec(), episode_events, {"obs": dict_obs}),
        "image": (env_pb.SpecResponse(env_id="Screens-v0"), episode_events, {"obs": _image_obs}),
    }
    for name, (spec, make, kwargs) in cases.items():
        sid = f"{unique_prefix}-{name}"
        events = make(sid, 1, 0, 4, **kwargs)
        await _closed_recording(js, root, sid, events, episodes=1, spec=spec)
        live = [observation_digest(e.reset.observation if e.HasField("reset") else e.step.result.observation)
                for e in events]
        reply = await ask(nc, subjects.RECORDER_EPISODE_DIGESTS, {"id": sid, "episode": 0})
        assert reply == {"observations": live}, name
        assert len(set(live)) == len(live), f"{name}: each row its own digest"

    for body, code, says in (
        ({"id": f"{unique_prefix}-box", "episode": 3}, "not_found", "no finished episode 3"),
        ({"id": f"{unique_prefix}-box"}, "invalid_argument", "'episode' is required"),
        ({"id": "nope", "episode": 0}, "not_found", "'nope'"),
        ({"id": "../x", "episode": 0}, "invalid_argument", "must not contain"),
    ):
        reply = await ask(nc, subjects.RECORDER_EPISODE_DIGESTS, body)
        assert reply["error"]["code"] == code and says in reply["error"]["message"], (body, reply)
