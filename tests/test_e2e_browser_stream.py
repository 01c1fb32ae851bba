"""The session stream as a browser drives it, on a real platform: JSON text commands, each frame
as the one binary JPEG message after the answer that announces it, observation digests equal to
those the recording serves afterwards."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
import simplejpeg
from platform_contracts.digests import observation_digest
from platform_testing.waiting import wait_for
from websockets.sync.client import ClientConnection, connect


def _ask(ws: ClientConnection, message: dict[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """Send a text command; (its answer, the JPEG that follows when the answer announces a frame)."""
    ws.send(json.dumps(message))
    text = ws.recv(timeout=30)
    assert isinstance(text, str), f"{message['op']}: the answer comes first, as text"
    answer = json.loads(text)
    assert answer["id"] == message["id"], answer
    assert "error" not in answer, answer["error"]
    frame = answer["result"].get("frame")
    if frame is None:
        return answer, None
    data = ws.recv(timeout=30)
    assert isinstance(data, bytes) and len(data) == frame["size"], "one binary message of the announced size"
    return answer, data


def _session(url: str, env_id: str, **options: Any) -> str:
    response = httpx.post(f"{url}/v0/sessions", json={"env_id": env_id, **options}, timeout=120)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _closed_recording(url: str, sid: str) -> dict[str, Any]:
    def closed() -> dict[str, Any] | None:
        reply = httpx.get(f"{url}/v0/recordings/{sid}")
        meta = reply.json() if reply.status_code == 200 else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    return wait_for(closed, what=f"recording {sid} closed with its episode")


def _play(url: str, sid: str, steps: int, action: Any, size: tuple[int, int]) -> tuple[list[str], list[float]]:
    """Reset (seed 7) and step over the stream with frames and digests; (the digests, the rewards)."""
    digests, rewards = [], []
    with connect(f"{url.replace('http', 'ws', 1)}/v0/sessions/{sid}/stream", max_size=None) as ws:
        reset, jpeg = _ask(ws, {"id": 0, "op": "reset", "seed": 7, "frame": True, "observation": "digest"})
        assert reset["result"]["observation"] is None and jpeg is not None
        assert simplejpeg.decode_jpeg(jpeg).shape[:2] == size
        assert (reset["result"]["frame"]["height"], reset["result"]["frame"]["width"]) == size
        digests.append(reset["result"]["observation_digest"])
        for i in range(1, steps + 1):
            step, jpeg = _ask(ws, {"id": i, "op": "step", "action": action(i), "frame": True,
                                   "observation": "digest"})
            assert jpeg is not None and jpeg[:2] == b"\xff\xd8" and step["result"]["observation"] is None
            digests.append(step["result"]["observation_digest"])
            rewards.append(step["result"]["reward"])
            assert not (step["result"]["terminated"] or step["result"]["truncated"]), "the episode goes on"
        full, _ = _ask(ws, {"id": "r", "op": "render"})
        assert full["result"]["frame"]["size"] > 0
    return digests, rewards


def test_cartpole_frames_and_digests_over_the_stream_match_the_recording(platform_stack):
    url = platform_stack.url
    sid = _session(url, "cartpole", record=True)
    digests, rewards = _play(url, sid, 8, lambda i: i % 2, (400, 600))
    assert len(set(digests)) == len(digests), "each state its own digest"
    assert httpx.delete(f"{url}/v0/sessions/{sid}").status_code == 200
    meta = _closed_recording(url, sid)
    assert meta["episodes"][0]["seed"] == 7 and meta["episodes"][0]["reset_options"] is None
    recorded = httpx.get(f"{url}/v0/recordings/{sid}/episodes/0/digests").json()["observations"]
    assert recorded == digests
    arrays = httpx.get(f"{url}/v0/recordings/{sid}/episodes/0", params={"arrays": "rewards"}).json()["arrays"]
    assert arrays["rewards"]["data"] == rewards


def test_pong_screens_come_as_jpeg_frames_and_their_digests_match_the_recording(platform_stack):
    """Pong's frame is its observation: the browser asks "digest" (not the 100 KB screen as JSON)
    and gets the screen as a JPEG; the recorder's digest of each recorded screen is the same."""
    url = platform_stack.url
    sid = _session(url, "pong", record=True, record_frames=True)
    digests, _ = _play(url, sid, 12, lambda i: 2 + i % 2, (210, 160))
    assert httpx.delete(f"{url}/v0/sessions/{sid}").status_code == 200
    _closed_recording(url, sid)
    recorded = httpx.get(f"{url}/v0/recordings/{sid}/episodes/0/digests").json()["observations"]
    assert recorded == digests
    with np.load(platform_stack.recordings / sid / "episode-000000.npz") as data:
        screens = data["observations"]
        assert screens.shape == (13, 210, 160, 3)
        assert [observation_digest(screen) for screen in screens] == digests
        assert len(data["frames"]) == 13, "the frames the gateway asked for are recorded too"
