"""A recording in progress on the whole platform shows what is written so far: a recorded
CartPole session with frames, stepped without ending its episode, is listed and got through the
gateway with its open episode and steps so far, and that episode is served (rewards, actions,
observations, frames) marked in progress, growing as the session steps; once the episode ends it
is served from its finished file."""

from __future__ import annotations

import httpx
import platform_sdk
import simplejpeg
from platform_testing.waiting import wait_for


def test_open_episode_shows_its_steps_so_far(platform_stack):
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, record_frames=True) as env:
        sid = env.session_id
        env.reset(seed=7)
        actions, rewards = [], []
        for i in range(4):  # CartPole stays up for 4 alternating pushes
            _, reward, terminated, truncated, _ = env.step(i % 2)
            actions.append(i % 2)
            rewards.append(reward)
            assert not (terminated or truncated)

        def listed_with_open_steps(count):
            def check():
                found = http.get("/v0/recordings", params={"session_id": sid}).json()["data"]
                summary = found[0] if found else {}
                return (summary.get("open_episode") or {}).get("length") == count and summary
            return check

        summary = wait_for(listed_with_open_steps(4), what="the listing to show the open episode's 4 steps")
        assert summary["status"] == "recording" and summary["episode_count"] == 0 and summary["step_count"] == 0
        assert summary["open_episode"]["index"] == 0 and summary["open_episode"]["return"] == sum(rewards)
        meta = http.get(f"/v0/recordings/{sid}").json()
        assert meta["open_episode"]["length"] == 4 and meta["episodes"] == []

        episode = wait_for(lambda: (r := http.get(f"/v0/recordings/{sid}/episodes/0",
                                                  params={"arrays": "rewards,actions,observations"}).json())
                           .get("episode", {}).get("length") == 4 and r, what="the open episode's 4 steps served")
        assert episode["in_progress"] is True and episode["frame_count"] == 5
        assert (episode["episode"]["seed"], episode["episode"]["start"]) == (7, "reset")
        assert episode["arrays"]["rewards"]["data"] == rewards
        assert episode["arrays"]["actions"]["data"] == actions
        assert episode["arrays"]["observations"]["shape"] == [5, 4]
        frame = http.get(f"/v0/recordings/{sid}/episodes/0/frames/4")
        assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
        assert simplejpeg.decode_jpeg_header(frame.content)[0] > 0
        assert http.get(f"/v0/recordings/{sid}/episodes/0/frames/5").status_code == 404
        assert http.get(f"/v0/recordings/{sid}/episodes/1").status_code == 404

        env.step(0)  # the episode grows
        wait_for(listed_with_open_steps(5), what="the listing to show the 5th step")
        grown = wait_for(lambda: (r := http.get(f"/v0/recordings/{sid}/episodes/0").json())["episode"]["length"] == 5
                         and r, what="the open episode served with its 5th step")
        assert grown["in_progress"] and grown["frame_count"] == 6

        done = False
        while not done:  # end it: it becomes a finished episode
            _, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated
        # Until meta.json has the finished episode (up to about a second) its entry lacks the length.
        finished = wait_for(lambda: (r := http.get(f"/v0/recordings/{sid}/episodes/0").json()).get("in_progress")
                            is False and "length" in r["episode"] and r, what="the ended episode served from its file")
        assert finished["episode"]["length"] > 5 and finished["episode"]["terminated"] is True
        summary = http.get("/v0/recordings", params={"session_id": sid}).json()["data"][0]
        assert summary["episode_count"] == 1 and summary["open_episode"] is None
