"""Lives through the running recorder: events from JetStream, the recordings API's `life` filter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from platform_contracts import subjects
from recorder_testkit import ask, closed, episode_events, publish, read_meta, started, wait_drained, wait_for

LIFE = "robot-1"


async def test_two_sessions_of_a_life_listed_by_life(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    nc, js = recorder_js
    root = tmp_path / "recordings"
    first, second, other = (f"{unique_prefix}-{n}" for n in ("a", "b", "c"))
    for sid, steps in ((first, 3), (second, 2)):
        await publish(js, started(sid, life=LIFE, frame_every=2))
        for event in episode_events(sid, 1, 0, steps):
            await publish(js, event)
        await publish(js, closed(sid, last_seq=steps + 1))
    await publish(js, started(other))
    await wait_drained(js)
    await wait_for(lambda: (m := read_meta(root, second)) and m.status == "closed", what="the second close")
    index = json.loads((root / "lives" / f"{LIFE}.json").read_text())
    assert [(s["session_id"], s["first_step"], s["steps"]) for s in index["sessions"]] == [
        (first, 0, 3), (second, 3, 2)]
    assert index["total_steps"] == 5 and index["frame_every"] == 2

    listing = (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {"life": LIFE}))["recordings"]
    assert [(r["session_id"], r["life"], r["life_offset"], r["episode_count"]) for r in listing] == [
        (second, LIFE, 3, 1), (first, LIFE, 0, 1)]
    listed = (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}))["recordings"]
    assert sorted(r["session_id"] for r in listed) == sorted([first, second, other])
    got = (await ask(nc, subjects.RECORDER_GET_RECORDING, {"id": second}))["recording"]
    assert got["episodes"][0]["life_start"] == 3
