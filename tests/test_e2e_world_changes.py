"""World changes on the whole platform: a recorded DeepMind Control cartpole session with a
timeline (a revealed mass change, a sensor offset), through the environment server's timeline,
the env host (ForRecording taken out of answers, its log), the gateway's route and the recorder
(recording.json, state.<name> of the true observations); a saved snapshot's branch replays
exactly; the route's 404 and 410."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import numpy as np
import platform_sdk
from platform_testing.waiting import wait_for

ENV = "dmc-cartpole-swingup"  # labelled (position, velocity: state.<name>) and MuJoCo (mass changes)
MASS = {"at": 3, "change": "mass", "body": "pole_1", "scale": 2.0, "reveal": True}
OFFSET = {"at": 6, "change": "sensor_offset", "offset": 10.0, "indices": [0]}  # position[0]: the cart
TIMELINE = [MASS, OFFSET]
ACTIONS = [np.array([a]) for a in (0.5, -0.3, 0.8, 0.2, -0.6, 0.4, 0.1, -0.2, 0.7, -0.5)]


def _steps(env: Any, actions: list[np.ndarray]) -> list[tuple[Any, ...]]:
    return [env.step(a) for a in actions]


def _same(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]]) -> None:
    assert len(left) == len(right)
    for (obs_a, r_a, term_a, trunc_a, _), (obs_b, r_b, term_b, trunc_b, _) in zip(left, right):
        for key in obs_a:
            np.testing.assert_array_equal(obs_a[key], obs_b[key])
        assert (r_a, term_a, trunc_a) == (r_b, term_b, trunc_b)


def test_a_recorded_timeline_end_to_end(platform_stack: Any) -> None:
    url = platform_stack.url
    http = httpx.Client(base_url=url, timeout=60)
    with platform_sdk.connect(ENV, url=url, record=True, kwargs={"world_changes": TIMELINE}) as env:
        sid = env.session_id
        env.reset(seed=7)
        before = _steps(env, ACTIONS[:5])  # session steps 0..4: the mass change applies before step 3
        saved = env.save_snapshot("between the changes")
        after = _steps(env, ACTIONS[5:])  # the offset applies before step 6
        infos = [info for *_, info in before + after]
        assert ["world_changes" in info for info in infos] == [i == 3 for i in range(10)]  # revealed there only
        assert infos[3]["world_changes"] == [MASS]  # as given
        assert "for_recording" not in str(infos)

        changes = env.world_changes()
        assert changes == http.get(f"/v0/sessions/{sid}/world-changes").json()
        assert changes["session_id"] == sid and changes["timeline"] == TIMELINE
        applied = changes["applied"]
        assert [{k: v for k, v in a.items() if k != "time"} for a in applied] == [
            {**MASS, "index": 0, "session_step": 3, "seq": 5},  # the reset is seq 1, step i seq i + 2
            {**OFFSET, "index": 1, "session_step": 6, "seq": 8},
        ]
        assert all(isinstance(a["time"], float) for a in applied)

    # The branch from the saved snapshot replays exactly: the offset comes at the same step.
    with platform_sdk.resume(saved["id"], url=url) as again:
        branch = _steps(again, ACTIONS[5:])
        resumed = again.world_changes()
    _same(after, branch)
    assert [(a["index"], a["session_step"], a["seq"]) for a in resumed["applied"]] == [(1, 6, 0)]  # its own log

    log = platform_stack.log("envhost")
    assert f"session {sid} ({ENV}): session step 3: world change 0 applied (seq 5)" in log
    assert f"session {sid} ({ENV}): session step 6: world change 1 applied (seq 8)" in log

    gone = http.get(f"/v0/sessions/{sid}/world-changes")
    assert gone.status_code == 410 and f"GET /v0/recordings/{sid}" in gone.json()["detail"]
    assert http.get("/v0/sessions/s-no-such-session/world-changes").status_code == 404

    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed" and m,
                    what="the recording closed")
    assert meta["world_changes"] == [
        {**MASS, "index": 0, "session_step": 3, "seq": 5, "episode": 0, "episode_step": 4},
        {**OFFSET, "index": 1, "session_step": 6, "seq": 8, "episode": 0, "episode_step": 7},
    ]
    with np.load(Path(platform_stack.recordings) / sid / "episode-000000.npz", allow_pickle=False) as episode:
        seen, true = episode["observations.position"], episode["state.position"]
        velocity_seen, velocity_true = episode["observations.velocity"], episode["state.velocity"]
    assert seen.shape == true.shape == (11, 3)  # the reset's row, then one per step
    np.testing.assert_allclose(seen[:7], true[:7])  # rows of the reset and steps 0..5: no offset yet
    np.testing.assert_allclose(seen[7:, 0], true[7:, 0] + 10.0)  # the agent saw the cart 10 further
    np.testing.assert_allclose(seen[7:, 1:], true[7:, 1:])
    np.testing.assert_allclose(velocity_seen, velocity_true)
    observed = np.array([obs["position"] for obs, *_ in before + after])
    np.testing.assert_allclose(observed, seen[1:])  # the observations recorded are the agent's
